// checkpoint.cpp — --weights PATH in any supported format, read into gradflow's tensor names (checkpoint.hpp).
// Order: find the files (folder: config.json + model.safetensors or the index and its shards), read every
// header (never the data), choose the format, classify every tensor name (block, final norm, outside the stack,
// or an error), then read only the block-stack tensors and map them (stack q/k/v, transpose Conv1D).
// Depends only on src/io and params (tests/io_fuzz compiles src/io/*.cpp alone).
#include "gradflow/io/checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "gradflow/core/error.hpp"
#include "io/file_bytes.hpp"
#include "io/hf_layouts.hpp"

namespace gradflow {

namespace {

namespace fs = std::filesystem;
using io_detail::HfLayout;
using io_detail::printable;
using json = nlohmann::json;

constexpr uint64_t kMaxJsonBytes = 64u << 20;  // config.json and the index are a few kB; refuse garbage early

[[noreturn]] void fail(const std::string& where, const std::string& what, const std::string& fix) {
  throw Error(where + ": " + what + "; fix: " + fix);
}

std::string in_quotes(const std::string& s) { return "'" + printable(s) + "'"; }

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string activation_name(Activation a) {
  return a == Activation::Relu ? "relu" : a == Activation::Gelu ? "gelu" : "gelu-tanh";
}

// A small JSON file (config.json, the shard index) as an object; Error naming the file otherwise.
json read_json_object(const std::string& path, const std::string& what) {
  const io_detail::InputFile file(path);
  if (file.size() > kMaxJsonBytes)
    fail(what + " " + in_quotes(path), "file of " + std::to_string(file.size()) + " bytes is too large to be one",
         "check that the file is the model's " + what);
  std::string text(static_cast<size_t>(file.size()), '\0');
  file.read_at(0, text.size(), &text[0]);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    fail(what + " " + in_quotes(path), "not valid JSON (" + printable(e.what(), 120) + ")",
         "restore the file saved with the model");
  }
  if (!j.is_object()) fail(what + " " + in_quotes(path), "not a JSON object", "restore the file saved with the model");
  return j;
}

// i for "<stem>{i}.rest" (decimal, at most 6 digits), and `rest`; -1 for any other name.
Index layer_of(const std::string& name, const std::string& stem, std::string* rest) {
  if (name.compare(0, stem.size(), stem) != 0) return -1;
  size_t k = stem.size();
  Index i = 0;
  while (k < name.size() && name[k] >= '0' && name[k] <= '9' && k - stem.size() < 6) i = 10 * i + (name[k++] - '0');
  if (k == stem.size() || k >= name.size() || name[k] != '.') return -1;
  if (rest) *rest = name.substr(k + 1);
  return i;
}

std::vector<std::string> alternatives(const std::string& spec) {
  std::vector<std::string> out;
  size_t a = 0;
  for (size_t b; (b = spec.find('|', a)) != std::string::npos; a = b + 1) out.push_back(spec.substr(a, b - a));
  out.push_back(spec.substr(a));
  return out;
}

// --- the files ----------------------------------------------------------------------------------------------

struct Files {
  std::string config;                              // config.json or ""
  std::vector<std::string> shards;                 // safetensors files
  std::vector<SafeTensor> headers;                 // every tensor (no data), all files
  std::unordered_map<std::string, size_t> shard_of;  // tensor name -> index into shards
};

void add_headers(Files& f, size_t shard) {
  for (SafeTensor& t : read_safetensors_header(f.shards[shard])) {
    if (!f.shard_of.emplace(t.name, shard).second)
      fail("safetensors file " + in_quotes(f.shards[shard]), "tensor " + in_quotes(t.name) + " is also in " +
                                                              in_quotes(f.shards[f.shard_of[t.name]]),
           "each tensor must be in one shard; re-save the checkpoint");
    f.headers.push_back(std::move(t));
  }
}

// model.safetensors.index.json: {"metadata": {...}, "weight_map": {"tensor name": "shard file name", ...}}.
void read_index(Files& f, const std::string& index_path) {
  const std::string where = "shard index " + in_quotes(index_path);
  const json idx = read_json_object(index_path, "shard index");
  if (!idx.contains("weight_map") || !idx["weight_map"].is_object())
    fail(where, "has no \"weight_map\" object", "restore the model.safetensors.index.json saved with the model");
  const fs::path dir = fs::path(index_path).parent_path();
  std::map<std::string, size_t> shard_index;
  std::map<std::string, std::string> listed;  // tensor -> shard file name
  for (auto it = idx["weight_map"].begin(); it != idx["weight_map"].end(); ++it) {
    if (!it.value().is_string())
      fail(where, "\"weight_map\" entry " + in_quotes(it.key()) + " is not a file name", "restore the index file");
    const std::string shard = it.value().get<std::string>();
    if (shard.empty() || shard == "." || shard == ".." || shard.find('/') != std::string::npos)
      fail(where, "shard name " + in_quotes(shard) + " is not a file name in the index's folder",
           "shards must sit beside the index; restore the index file");
    listed[it.key()] = shard;
    if (shard_index.emplace(shard, shard_index.size()).second) {
      const std::string p = (dir / shard).string();
      std::error_code ec;
      if (!fs::exists(p, ec))
        fail(where, "names shard " + in_quotes(shard) + " (for tensor " + in_quotes(it.key()) + "), which does not exist",
             "download every shard the index lists into " + in_quotes(dir.empty() ? std::string(".") : dir.string()));
    }
  }
  if (listed.empty()) fail(where, "\"weight_map\" is empty", "restore the index file");
  f.shards.assign(shard_index.size(), "");
  for (const auto& [name, i] : shard_index) f.shards[i] = (dir / name).string();
  for (size_t i = 0; i < f.shards.size(); ++i) add_headers(f, i);
  for (const auto& [tensor, shard] : listed) {
    const auto it = f.shard_of.find(tensor);
    if (it == f.shard_of.end() || f.shards[it->second] != (dir / shard).string())
      fail(where, "maps tensor " + in_quotes(tensor) + " to shard " + in_quotes(shard) + ", which does not hold it",
           "the index and the shards do not belong together; download them again");
  }
  for (const SafeTensor& t : f.headers)
    if (!listed.count(t.name))
      fail(where, "does not list tensor " + in_quotes(t.name) + " of shard " + in_quotes(f.shards[f.shard_of[t.name]]),
           "the index and the shards do not belong together; download them again");
}

Files find_files(const std::string& path) {
  Files f;
  std::error_code ec;
  const auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (fs::is_directory(path, ec)) {
    const fs::path dir(path);
    if (fs::exists(dir / "config.json", ec)) f.config = (dir / "config.json").string();
    if (fs::exists(dir / "model.safetensors", ec)) {
      f.shards = {(dir / "model.safetensors").string()};
      add_headers(f, 0);
    } else if (fs::exists(dir / "model.safetensors.index.json", ec)) {
      read_index(f, (dir / "model.safetensors.index.json").string());
    } else {
      const bool bin = fs::exists(dir / "pytorch_model.bin", ec);
      fail("--weights " + in_quotes(path), "the folder has neither model.safetensors nor model.safetensors.index.json" +
                                            std::string(bin ? " (pytorch_model.bin is not read)" : ""),
           bin ? "convert it: safetensors.torch.save_file(torch.load('pytorch_model.bin'), 'model.safetensors')"
               : "name the folder of a Hugging Face checkpoint, or a .safetensors file");
    }
  } else if (ends_with(path, ".index.json")) {
    read_index(f, path);
  } else {
    f.shards = {path};
    add_headers(f, 0);
  }
  return f;
}

// --- the format -----------------------------------------------------------------------------------------------

// The prefix of `layout` the names use ("transformer." ...), or nullopt. Only non-empty prefixes when
// `prefixed_only`.
std::optional<std::string> prefix_of(const HfLayout& layout, const std::vector<SafeTensor>& headers,
                                     bool prefixed_only) {
  for (const std::string& p : layout.prefixes) {
    if (prefixed_only && p.empty()) continue;
    for (const SafeTensor& t : headers)
      if (layer_of(t.name, p + layout.layer_stem, nullptr) >= 0) return p;
  }
  return std::nullopt;
}

bool looks_like_torch_encoder(const std::vector<SafeTensor>& headers) {
  for (const SafeTensor& t : headers)
    if (layer_of(t.name, "layers.", nullptr) >= 0) return true;
  return false;
}

std::string known_layouts() {
  std::string s = "torch-encoder (layers.{i}.self_attn.in_proj_weight, ...)";
  for (const HfLayout& l : io_detail::hf_layouts())
    s += ", " + l.format + " (" + (l.prefixes.size() > 1 ? "[" + l.prefixes[1] + "]" : "") + l.layer_stem + "{i}.*)";
  return s;
}

// The distinct first components of the names ("bert", "cls", ...), at most 8, for an error message.
std::string name_roots(const std::vector<SafeTensor>& headers) {
  std::set<std::string> roots;
  for (const SafeTensor& t : headers) roots.insert(printable(t.name.substr(0, t.name.find('.')), 40));
  std::string s;
  size_t k = 0;
  for (const std::string& r : roots) {
    if (k == 8) return s + ", ...";
    s += (k++ ? ", '" : "'") + r + ".*'";
  }
  return s.empty() ? "no tensors" : s;
}

std::string choose_format(const std::string& path, const std::string& format, const Files& f, const json* config) {
  std::string by_config;
  if (config && config->contains("model_type")) {
    const json& mt = (*config)["model_type"];
    const std::string type = mt.is_string() ? mt.get<std::string>() : mt.dump();
    for (const HfLayout& l : io_detail::hf_layouts())
      if (l.config.model_type == type) by_config = l.format;
    if (by_config.empty() && (format == "auto" || format != "torch-encoder")) {
      std::string known;
      for (const HfLayout& l : io_detail::hf_layouts()) known += (known.empty() ? "'" : ", '") + l.config.model_type + "'";
      if (format == "auto")
        fail("config.json " + in_quotes(f.config), "model_type " + in_quotes(type) + " is not one gradflow reads (" + known + " are)",
             "gradflow analyzes BERT, RoBERTa and GPT-2 checkpoints; for another model, save its blocks as an "
             "nn.TransformerEncoder state_dict");
    }
  }
  if (format != "auto") {
    if (!by_config.empty() && by_config != format)
      fail("--weights-format " + format, "contradicts config.json " + in_quotes(f.config) + " (model_type of " + by_config + ")",
           "drop --weights-format (config.json decides) or pass --weights-format " + by_config);
    return format;
  }
  if (!by_config.empty()) return by_config;
  if (looks_like_torch_encoder(f.headers)) return "torch-encoder";
  for (bool prefixed_only : {true, false})
    for (const HfLayout& l : io_detail::hf_layouts())
      if (prefix_of(l, f.headers, prefixed_only)) return l.format;
  fail("--weights " + in_quotes(path), "no known layout: the tensor names start with " + name_roots(f.headers),
       "pass --weights-format; gradflow reads " + known_layouts());
}

// --- config.json ----------------------------------------------------------------------------------------------

std::optional<Index> config_int(const json* c, const std::string& key, const std::string& path) {
  if (!c || key.empty() || !c->contains(key) || (*c)[key].is_null()) return std::nullopt;
  const json& v = (*c)[key];
  if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > (int64_t(1) << 40))
    fail("config.json " + in_quotes(path), in_quotes(key) + " is " + printable(v.dump(), 40) + ", not a positive integer",
         "restore the config.json saved with the model");
  return static_cast<Index>(v.get<int64_t>());
}

bool config_flag(const json* c, const std::string& key, bool fallback) {
  if (!c || !c->contains(key) || !(*c)[key].is_boolean()) return fallback;
  return (*c)[key].get<bool>();
}

CheckpointArch arch_of(const HfLayout& l, const json* c, const std::string& cpath) {
  CheckpointArch a;
  a.placement = l.placement;
  a.causal = l.causal;
  a.source = c ? "config.json " + in_quotes(cpath) : "the " + l.format + " defaults (no config.json)";
  const std::string where = "config.json " + in_quotes(cpath);
  a.d_model = config_int(c, l.config.d_model, cpath);
  a.heads = config_int(c, l.config.heads, cpath);
  a.layers = config_int(c, l.config.layers, cpath);
  a.d_ff = config_int(c, l.config.d_ff, cpath);
  if (!a.d_ff && a.d_model && l.format == "hf-gpt2") a.d_ff = 4 * *a.d_model;  // n_inner null: 4·n_embd
  a.activation_name = l.default_activation == "gelu-tanh" ? "gelu_new" : l.default_activation;
  if (c && c->contains(l.config.activation)) {
    const json& v = (*c)[l.config.activation];
    a.activation_name = v.is_string() ? v.get<std::string>() : printable(v.dump(), 40);
  }
  const std::string& an = a.activation_name;
  if (an == "gelu") a.activation = Activation::Gelu;
  else if (an == "gelu_new" || an == "gelu_pytorch_tanh") a.activation = Activation::GeluTanh;
  else if (an == "relu") a.activation = Activation::Relu;
  else
    fail(where, in_quotes(l.config.activation) + " is " + in_quotes(an) +
                    ", which gradflow does not have (gelu, gelu_new, gelu_pytorch_tanh and relu it has)",
         "analyze a checkpoint with one of these activations");
  a.norm_eps = l.default_norm_eps;
  if (c && c->contains(l.config.norm_eps)) {
    const json& v = (*c)[l.config.norm_eps];
    if (!v.is_number() || !(v.get<double>() > 0.0))
      fail(where, in_quotes(l.config.norm_eps) + " is " + printable(v.dump(), 40) + ", not a positive number",
           "restore the config.json saved with the model");
    a.norm_eps = v.get<double>();
  }
  // settings that change the block's equations beyond what gradflow's block computes
  const auto refuse = [&](bool bad, const std::string& what) {
    if (bad) fail(where, what + ", which gradflow's " + l.placement + " block does not compute",
                  "analyze a checkpoint without it");
  };
  refuse(config_flag(c, "add_cross_attention", false), "\"add_cross_attention\" is true (cross-attention layers)");
  if (l.format == "hf-gpt2") {
    refuse(!config_flag(c, "scale_attn_weights", true), "\"scale_attn_weights\" is false (unscaled scores)");
    refuse(config_flag(c, "scale_attn_by_inverse_layer_idx", false),
           "\"scale_attn_by_inverse_layer_idx\" is true (scores / (layer + 1))");
  } else {
    refuse(config_flag(c, "is_decoder", false), "\"is_decoder\" is true (a causal BERT)");
    if (c && c->contains("position_embedding_type") && (*c)["position_embedding_type"] != "absolute")
      refuse(true, "\"position_embedding_type\" is " + printable((*c)["position_embedding_type"].dump(), 40) +
                       " (relative position scores inside attention)");
  }
  return a;
}

// --- the name map ---------------------------------------------------------------------------------------------

struct Mapped {
  std::vector<std::string> needed;   // the checkpoint's tensors to read
  std::vector<std::string> outside;  // not part of the block stack
  Index layers = 0;
  bool final_norm = false;
};

// Every name is a block tensor of some rule, an ignored buffer, a final-norm tensor, or outside the stack (any
// name not under the layer stem). A name under the layer stem that no rule uses is an error: the block has
// something gradflow's block has not.
Mapped classify(const HfLayout& l, const std::string& prefix, const Files& f, const std::string& path) {
  std::set<std::string> block_sources, final_sources;
  for (const auto& r : l.block)
    for (const auto& s : r.sources)
      for (const auto& alt : alternatives(s)) block_sources.insert(alt);
  for (const auto& r : l.final_norm)
    for (const auto& s : r.sources)
      for (const auto& alt : alternatives(s)) final_sources.insert(alt);
  Mapped m;
  const std::string stem = prefix + l.layer_stem;
  for (const SafeTensor& t : f.headers) {
    std::string rest;
    const Index i = layer_of(t.name, stem, &rest);
    if (i >= 0) {
      if (std::find(l.ignored_in_layer.begin(), l.ignored_in_layer.end(), rest) != l.ignored_in_layer.end()) {
        m.outside.push_back(t.name);
        continue;
      }
      if (!block_sources.count(rest))
        fail("--weights " + in_quotes(path) + " (" + l.format + ")",
             "tensor " + in_quotes(t.name) + " is part of layer " + std::to_string(i) +
                 " but gradflow's block has no place for it (" + l.note + ")",
             "analyze a checkpoint of the plain architecture (no cross-attention or adapters), or pass the right "
             "--weights-format");
      m.layers = std::max(m.layers, i + 1);
      m.needed.push_back(t.name);
    } else if (t.name.compare(0, prefix.size(), prefix) == 0 && final_sources.count(t.name.substr(prefix.size()))) {
      m.final_norm = true;
      m.needed.push_back(t.name);
    } else {
      m.outside.push_back(t.name);
    }
  }
  return m;
}

// Stacks (dim 0) and/or transposes the source tensors into one gradflow tensor.
SafeTensor build(const std::string& name, const std::vector<const SafeTensor*>& src, bool transpose,
                 const std::string& where) {
  const auto shape_error = [&](const std::string& what) {
    fail(where, what, "the checkpoint is damaged or not of this format; check --weights-format");
  };
  const std::vector<int64_t>& s0 = src[0]->shape;
  for (const SafeTensor* t : src) {
    if (t->shape.empty() || t->shape.size() > 2 || t->data.empty())
      shape_error("tensor " + in_quotes(t->name) + " has shape " + shape_str(t->shape) + "; a non-empty vector or matrix is needed");
    if (t->shape.size() != s0.size() || (s0.size() == 2 && t->shape[1] != s0[1]) || t->shape[0] != s0[0])
      shape_error("tensor " + in_quotes(t->name) + " has shape " + shape_str(t->shape) + " but " + in_quotes(src[0]->name) +
                  " has " + shape_str(s0) + "; they must match");
  }
  SafeTensor out;
  out.name = name;
  out.dtype = src[0]->dtype;
  if (s0.size() == 1) {
    out.shape = {s0[0] * static_cast<int64_t>(src.size())};
    for (const SafeTensor* t : src) out.data.insert(out.data.end(), t->data.begin(), t->data.end());
    return out;
  }
  const int64_t rows = s0[0], cols = s0[1];
  if (!transpose) {
    out.shape = {rows * static_cast<int64_t>(src.size()), cols};
    for (const SafeTensor* t : src) out.data.insert(out.data.end(), t->data.begin(), t->data.end());
    return out;
  }
  if (src.size() != 1) shape_error("internal: transposing stacked tensors is not defined");
  out.shape = {cols, rows};
  out.data.resize(src[0]->data.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out.data[static_cast<size_t>(c * rows + r)] = src[0]->data[static_cast<size_t>(r * cols + c)];
  return out;
}

// The embedding tensors (role -> the checkpoint's name), each required to exist; Error otherwise.
std::map<std::string, std::string> embedding_names(const HfLayout& l, const std::string& prefix, const Files& f,
                                                   const std::string& path) {
  const auto& e = l.embeddings;
  std::map<std::string, std::string> out;
  for (const auto& [role, spec] : std::vector<std::pair<std::string, std::string>>{
           {"word", e.word}, {"position", e.position}, {"token_type", e.token_type},
           {"norm.weight", e.norm_weight}, {"norm.bias", e.norm_bias}}) {
    if (spec.empty()) continue;
    for (const std::string& alt : alternatives(spec))
      if (f.shard_of.count(prefix + alt)) out[role] = prefix + alt;
    if (!out.count(role))
      fail("--weights " + in_quotes(path) + " (" + l.format + ")",
           "--token-ids needs the embeddings, but tensor " + in_quotes(prefix + alternatives(spec)[0]) + " is missing",
           "use a checkpoint saved with its embeddings (the base model), or give x_0 with --input");
  }
  return out;
}

void map_hf(Checkpoint& ck, const HfLayout& l, const std::string& prefix, const Files& f, const Mapped& m) {
  std::set<std::string> needed(m.needed.begin(), m.needed.end());
  for (const auto& [role, name] : ck.embedding_names) needed.insert(name);
  std::unordered_map<std::string, SafeTensor> read;
  for (const std::string& shard : f.shards)
    for (SafeTensor& t : read_safetensors(shard, [&](const std::string& n) { return needed.count(n) > 0; }))
      read.emplace(t.name, std::move(t));
  const std::string where = "--weights " + in_quotes(ck.path) + " (" + l.format + ")";
  const auto one = [&](const std::string& gradflow_name, const io_detail::TensorRule& r, const std::string& base) {
    std::vector<const SafeTensor*> src;
    std::string names;
    for (const std::string& spec : r.sources) {
      const SafeTensor* found = nullptr;
      for (const std::string& alt : alternatives(spec))
        if (!found) {
          const auto it = read.find(base + alt);
          if (it != read.end()) found = &it->second;
        }
      if (!found)
        fail(where, "tensor " + in_quotes(base + alternatives(spec)[0]) + " is missing (gradflow's " + gradflow_name +
                        " needs it)",
             "the checkpoint is incomplete: download it again (every shard), or check --weights-format");
      src.push_back(found);
      names += (names.empty() ? "" : " + ") + found->name;
    }
    ck.tensors.push_back(build(gradflow_name, src, r.transpose, where));
    ck.source_names[gradflow_name] = names + (r.transpose ? " (transposed)" : "");
    for (const SafeTensor* t : src) read.erase(t->name);  // each source feeds one tensor: the peak stays at one copy
  };
  for (const auto& [role, name] : ck.embedding_names) {
    SafeTensor t = std::move(read.at(name));
    read.erase(name);
    t.name = role;
    const bool vector = role.rfind("norm.", 0) == 0;
    if (t.shape.size() != (vector ? 1u : 2u) || t.data.empty())
      fail(where, "embedding tensor " + in_quotes(name) + " has shape " + shape_str(t.shape) + "; a non-empty " +
                      (vector ? "vector" : "matrix") + " is needed",
           "the checkpoint is damaged or not of this format; check --weights-format");
    ck.embeddings.push_back(std::move(t));
  }
  for (Index i = 0; i < m.layers; ++i)
    for (const auto& r : l.block)
      one("layers." + std::to_string(i) + "." + r.gradflow, r, prefix + l.layer_stem + std::to_string(i) + ".");
  if (m.final_norm)
    for (const auto& r : l.final_norm) one(r.gradflow, r, prefix);
  // The attention input projection must be (3d, d): q, k, v each (d, d).
  const SafeTensor& in = ck.tensors[0];
  if (in.shape.size() != 2 || in.shape[0] != 3 * in.shape[1])
    fail(where, "tensor " + ck.source_names[in.name] + " gives q, k, v of shape " + shape_str(in.shape) +
                    " (gradflow's (3d, d)); each projection must be square",
         "the checkpoint is damaged or not of this format; check --weights-format");
}

double numel_of(const SafeTensor& t) {
  double n = 1;
  for (int64_t d : t.shape) n *= static_cast<double>(d);
  return n;
}

// What reading will hold, from the headers: the tensors kept (the block stack, the embeddings) and the largest
// gradflow tensor, built while its sources are still held.
CheckpointLoad load_plan(const Checkpoint& ck, const Files& f, const HfLayout* l, const std::string& prefix,
                         const std::vector<std::string>& needed) {
  CheckpointLoad p;
  p.path = ck.path;
  p.format = ck.format;
  std::unordered_map<std::string, const SafeTensor*> header;
  for (const SafeTensor& t : f.headers) header[t.name] = &t;
  for (const std::string& n : needed) {
    p.block_values += numel_of(*header.at(n));
    p.largest_values = std::max(p.largest_values, numel_of(*header.at(n)));
  }
  for (const auto& [role, name] : ck.embedding_names) p.embedding_values += numel_of(*header.at(name));
  if (!l) return p;
  for (const auto& r : l->block) {  // layer 0's tensors (every layer has the same shapes, checked when built)
    double values = 0;
    for (const std::string& spec : r.sources)
      for (const std::string& alt : alternatives(spec)) {
        const auto it = header.find(prefix + l->layer_stem + "0." + alt);
        if (it != header.end()) values += numel_of(*it->second);
      }
    p.largest_values = std::max(p.largest_values, values);
  }
  return p;
}

}  // namespace

const std::vector<std::string>& weights_formats() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> out = {"auto", "torch-encoder"};
    for (const HfLayout& l : io_detail::hf_layouts()) out.push_back(l.format);
    return out;
  }();
  return v;
}

double CheckpointLoad::peak_bytes() const {
  const double largest = largest_values * sizeof(double);  // the raw bytes of a tensor are at most its doubles
  return (block_values + embedding_values) * sizeof(double) + largest +
         std::min(largest, static_cast<double>(kSafetensorsReadBufferBytes));
}
double CheckpointLoad::kept_bytes() const { return (block_values + embedding_values) * sizeof(double); }

Checkpoint read_checkpoint(const std::string& path, const std::string& format, bool with_embeddings,
                           const std::function<void(const CheckpointLoad&)>& before_reading) {
  const auto& formats = weights_formats();
  if (std::find(formats.begin(), formats.end(), format) == formats.end()) {
    std::string list;
    for (const auto& f : formats) list += (list.empty() ? "" : " | ") + f;
    throw Error("--weights-format '" + printable(format) + "' is not one of " + list + "; fix: e.g. --weights-format auto");
  }
  Checkpoint ck;
  ck.path = path;
  const Files f = find_files(path);
  ck.files = f.shards;
  std::optional<json> config;
  if (!f.config.empty()) config = read_json_object(f.config, "config.json");
  ck.format = choose_format(path, format, f, config ? &*config : nullptr);
  if (ck.format == "torch-encoder") {
    if (with_embeddings)
      fail("--token-ids", "needs a Hugging Face checkpoint's embeddings, but " + in_quotes(path) +
                              " is a torch-encoder state_dict (blocks only)",
           "give x_0 with --input, or use a BERT, RoBERTa or GPT-2 checkpoint");
    if (before_reading) {
      std::vector<std::string> all;
      for (const SafeTensor& t : f.headers) all.push_back(t.name);
      before_reading(load_plan(ck, f, nullptr, "", all));
    }
    for (const std::string& shard : f.shards)
      for (SafeTensor& t : read_safetensors(shard)) ck.tensors.push_back(std::move(t));
    return ck;
  }
  const HfLayout& l = *io_detail::find_hf_layout(ck.format);
  ck.config_path = f.config;
  const std::optional<std::string> prefix = prefix_of(l, f.headers, false);
  if (!prefix)
    fail("--weights " + in_quotes(path), "no tensor is named " + l.layer_stem + "{i}.* (with an optional " +
                                          (l.prefixes.size() > 1 ? in_quotes(l.prefixes[1]) : std::string("")) +
                                          " prefix) as " + l.format + " needs; the names start with " +
                                          name_roots(f.headers),
         "pass the right --weights-format; gradflow reads " + known_layouts());
  const Mapped m = classify(l, *prefix, f, path);
  ck.outside = m.outside;
  ck.arch = arch_of(l, config ? &*config : nullptr, f.config);
  if (with_embeddings) {
    ck.embedding_names = embedding_names(l, *prefix, f, path);
    if (l.embeddings.roberta_positions) {
      ck.padding_idx = 1;  // RoBERTa's pad_token_id
      if (const auto pad = config ? config_int(&*config, "pad_token_id", f.config) : std::nullopt) ck.padding_idx = *pad;
      ck.position_offset = ck.padding_idx + 1;
    }
  }
  if (before_reading) before_reading(load_plan(ck, f, &l, *prefix, m.needed));
  map_hf(ck, l, *prefix, f, m);
  return ck;
}

void load_checkpoint_params(const Checkpoint& c, ParamStore& store) {
  const std::vector<std::string> extra = load_params(store, c.tensors, c.path, &c.source_names);
  if (extra.empty()) return;
  constexpr size_t kShown = 8;
  std::string names;
  for (size_t i = 0; i < extra.size() && i < kShown; ++i) names += (i ? ", '" : "'") + extra[i] + "'";
  if (extra.size() > kShown) names += " and " + std::to_string(extra.size() - kShown) + " more";
  std::fprintf(stderr, "gradflow: warning: safetensors file '%s': %zu tensor%s the model does not use, ignored: %s\n",
               c.path.c_str(), extra.size(), extra.size() == 1 ? "" : "s", names.c_str());
}

double checkpoint_kept_bytes(const Checkpoint& c) {
  double values = 0;
  for (const auto* list : {&c.tensors, &c.embeddings})
    for (const SafeTensor& t : *list) values += static_cast<double>(t.data.size());
  return values * sizeof(double);
}

Mat embed_tokens(const Checkpoint& c, const std::vector<int64_t>& ids) {
  const auto find = [&](const std::string& role) -> const SafeTensor* {
    for (const SafeTensor& t : c.embeddings)
      if (t.name == role) return &t;
    return nullptr;
  };
  const SafeTensor* word = find("word");
  const SafeTensor* pos = find("position");
  if (!word || !pos)
    throw Error("internal: embed_tokens: the checkpoint was read without its embeddings", ErrorKind::Internal);
  const SafeTensor* type = find("token_type");
  const SafeTensor* nw = find("norm.weight");
  const SafeTensor* nb = find("norm.bias");
  const Index n = static_cast<Index>(ids.size()), d = word->shape[1];
  require(n > 0, "--token-ids is empty; fix: give at least one id, e.g. --token-ids 101,102");
  for (const SafeTensor* t : {pos, type, nw, nb})
    if (t && t->shape.back() != d)
      throw Error("--weights '" + c.path + "': embedding " + c.embedding_names.at(t->name) + " has width " +
                  std::to_string(t->shape.back()) + " but the word embeddings have " + std::to_string(d) +
                  "; fix: restore the checkpoint");
  const Index vocab = word->shape[0], positions = pos->shape[0];
  Mat x(n, d);
  Index seen = 0;  // RoBERTa: non-padding tokens so far
  for (Index t = 0; t < n; ++t) {
    const int64_t id = ids[static_cast<size_t>(t)];
    require(id >= 0 && id < vocab, "--token-ids: id " + std::to_string(id) + " (token " + std::to_string(t) +
                                       ") is outside the vocabulary of " + std::to_string(vocab) + " tokens of " +
                                       c.embedding_names.at("word") + "; fix: use ids from the checkpoint's tokenizer");
    Index p = t;
    if (c.padding_idx >= 0) p = id == c.padding_idx ? c.padding_idx : c.padding_idx + (++seen);
    require(p < positions, "--token-ids: token " + std::to_string(t) + " needs position id " + std::to_string(p) +
                               " but " + c.embedding_names.at("position") + " has " + std::to_string(positions) +
                               " positions; fix: give fewer ids");
    const double* w = word->data.data() + id * d;
    const double* q = pos->data.data() + p * d;
    for (Index k = 0; k < d; ++k) {
      double v = w[k];
      if (type) v += type->data[static_cast<size_t>(k)];  // token type 0 (BERT: word + type, then + position)
      x(t, k) = v + q[k];
    }
  }
  if (nw && nb) {  // the embedding LayerNorm, with the checkpoint's eps
    const double eps = c.arch.norm_eps.value_or(1e-12);
    for (Index t = 0; t < n; ++t) {
      const double mean = x.row(t).mean();
      const RowVec centered = x.row(t).array() - mean;
      const double var = centered.squaredNorm() / static_cast<double>(d);
      const double inv = 1.0 / std::sqrt(var + eps);
      for (Index k = 0; k < d; ++k) x(t, k) = centered(k) * inv * nw->data[static_cast<size_t>(k)] + nb->data[static_cast<size_t>(k)];
    }
  }
  return x;
}

void apply_checkpoint(const Checkpoint& c, const GivenSizes& sizes, const GivenArch& given, ModelConfig& cfg) {
  const CheckpointSizes s = checkpoint_sizes(c.tensors, c.path);
  const CheckpointArch& a = c.arch;
  const auto config_vs_tensors = [&](const std::optional<Index>& v, Index tensors, const std::string& what) {
    if (v && *v != tensors)
      throw Error(a.source + " says " + what + " = " + std::to_string(*v) + " but the tensors of " + in_quotes(c.path) +
                  " have " + std::to_string(tensors) + "; fix: restore the config.json saved with these weights");
  };
  config_vs_tensors(a.layers, s.layers, "the number of layers");
  config_vs_tensors(a.d_model, s.d_model, "the width d");
  config_vs_tensors(a.d_ff, s.d_ff, "the feed-forward width d_ff");
  apply_checkpoint_sizes(s, sizes, c.path, cfg);
  if (c.format == "torch-encoder") return;
  const std::string by = "the " + c.format + " checkpoint " + in_quotes(c.path);
  if (given.placement && *given.placement != a.placement)
    throw Error("--placement " + *given.placement + " contradicts " + by + " (its block is " + a.placement +
                "); fix: drop --placement (the checkpoint fixes it)");
  if (given.causal && !*a.causal)
    throw Error("--causal contradicts " + by + " (bidirectional attention); fix: drop --causal");
  if (given.norm_not_layernorm)
    throw Error("--norm contradicts " + by + " (LayerNorm); fix: drop --norm (the checkpoint fixes it)");
  if (a.heads) {
    if (given.heads && *given.heads != *a.heads)
      throw Error("--heads " + std::to_string(*given.heads) + " contradicts " + a.source + " (" +
                  std::to_string(*a.heads) + " heads); fix: drop --heads (the checkpoint fixes it)");
    cfg.heads = *a.heads;
  } else if (!given.heads) {
    throw Error(by + " has no config.json, and the number of attention heads is not in the tensors; fix: pass "
                "--heads (e.g. 12 for bert-base and gpt2), or name the checkpoint's folder with its config.json");
  }
  if (given.activation && *given.activation != *a.activation)
    throw Error("--activation " + activation_name(*given.activation) + " contradicts " + a.source + " (" +
                a.activation_name + " = gradflow's " + activation_name(*a.activation) +
                "); fix: drop --activation (the checkpoint fixes it)");
  cfg.placement = a.placement;
  cfg.causal = *a.causal;
  cfg.activation = *a.activation;
  cfg.norm = NormKind::LayerNorm;
  cfg.norm_eps = *a.norm_eps;
}

}  // namespace gradflow
