// hf_name_map.cpp — a Hugging Face checkpoint's tensors mapped onto gradflow's names (see hf_name_map.hpp).
#include "io/hf_name_map.hpp"

#include <algorithm>
#include <string>
#include <set>
#include <unordered_map>

#include "io/checkpoint_errors.hpp"

namespace gradflow::io_detail {

namespace {

// GPT-NeoX's fused rows, per head [q_j | k_j | v_j] (e rows each), regrouped as [q_0 ... q_{h-1} | k_0 ... | v_0 ...].
void regroup_per_head(SafeTensor& t, Index heads, const std::string& where) {
  const int64_t rows = t.shape[0], cols = t.shape.size() == 2 ? t.shape[1] : 1;
  if (heads <= 0 || rows % (3 * heads) != 0)
    fail(where, "tensor " + in_quotes(t.name) + " has " + std::to_string(rows) + " rows, not 3 x " +
                    std::to_string(heads) + " heads x head width",
         "restore the config.json saved with the model (its num_attention_heads)");
  t.data = regroup_qkv(t.data, rows, cols, heads, true);
}

// Stacks (dim 0: q, k, v of widths h·e, K·e, K·e), transposes (Conv1D) or regroups (GPT-NeoX) the source tensors
// into one gradflow tensor.
SafeTensor build(const std::string& name, const std::vector<const SafeTensor*>& src, const TensorRule& rule,
                 Index heads, const std::string& where) {
  const auto shape_error = [&](const std::string& what) {
    fail(where, what, "the checkpoint is damaged or not of this format; check --weights-format");
  };
  const std::vector<int64_t>& s0 = src[0]->shape;
  int64_t rows = 0;
  for (const SafeTensor* t : src) {
    if (t->shape.empty() || t->shape.size() > 2 || t->data.empty())
      shape_error("tensor " + in_quotes(t->name) + " has shape " + shape_text(t->shape) + "; a non-empty vector or matrix is needed");
    if (t->shape.size() != s0.size() || (s0.size() == 2 && t->shape[1] != s0[1]))
      shape_error("tensor " + in_quotes(t->name) + " has shape " + shape_text(t->shape) + " but " + in_quotes(src[0]->name) +
                  " has " + shape_text(s0) + "; they must match" + (s0.size() == 2 ? " in columns" : ""));
    rows += t->shape[0];
  }
  SafeTensor out;
  out.name = name;
  out.dtype = src[0]->dtype;
  if (!rule.transpose) {
    out.shape = s0;
    out.shape[0] = rows;
    for (const SafeTensor* t : src) out.data.insert(out.data.end(), t->data.begin(), t->data.end());
    if (rule.per_head_qkv) regroup_per_head(out, heads, where);
    return out;
  }
  if (src.size() != 1 || s0.size() != 2) shape_error("internal: transposing stacked tensors or vectors is not defined");
  const int64_t cols = s0[1];
  out.shape = {cols, rows};
  out.data.resize(src[0]->data.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out.data[static_cast<size_t>(c * rows + r)] = src[0]->data[static_cast<size_t>(r * cols + c)];
  return out;
}

}  // namespace

MappedNames classify_names(const HfLayout& l, const std::string& prefix, const CheckpointFiles& f,
                           const std::string& path) {
  std::set<std::string> block_sources, final_sources;
  for (const auto& r : l.block)
    for (const auto& s : r.sources)
      for (const auto& alt : alternatives(s)) block_sources.insert(alt);
  for (const auto& r : l.final_norm)
    for (const auto& s : r.sources)
      for (const auto& alt : alternatives(s)) final_sources.insert(alt);
  MappedNames m;
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

std::map<std::string, std::string> embedding_names(const HfLayout& l, const std::string& prefix,
                                                   const CheckpointFiles& f, const std::string& path, bool with_head,
                                                   bool tied) {
  const auto& e = l.embeddings;
  std::map<std::string, std::string> out;
  if (with_head && !tied && !e.head.empty()) {  // the LM head is top-level (lm_head, embed_out), whatever the prefix
    for (const std::string& name : {e.head, prefix + e.head})
      if (f.shard_of.count(name)) out["head"] = name;
    if (!out.count("head"))
      fail("--weights " + in_quotes(path) + " (" + l.format + ")",
           "--loss lm needs the LM head " + in_quotes(e.head) + " (config.json's tie_word_embeddings is false), but "
           "the checkpoint has no such tensor",
           "use the checkpoint saved with its head (the *ForCausalLM model), or --loss dot");
  }
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

void map_hf(Checkpoint& ck, const HfLayout& l, const std::string& prefix, const CheckpointFiles& f,
            const MappedNames& m) {
  std::set<std::string> needed(m.needed.begin(), m.needed.end());
  for (const auto& [role, name] : ck.embedding_names) needed.insert(name);
  std::unordered_map<std::string, SafeTensor> read;
  for (const std::string& shard : f.shards)
    for (SafeTensor& t : read_safetensors(shard, [&](const std::string& n) { return needed.count(n) > 0; }))
      read.emplace(t.name, std::move(t));
  const std::string where = "--weights " + in_quotes(ck.path) + " (" + l.format + ")";
  const auto one = [&](const std::string& gradflow_name, const TensorRule& r, const std::string& base) {
    if (r.optional) {  // absent altogether: the model (config.json) decides whether it needs it
      std::string present, absent;  // a source of each kind, as the file names it
      for (const std::string& spec : r.sources) {
        bool here = false;
        for (const std::string& alt : alternatives(spec)) here = here || read.count(base + alt) > 0;
        (here ? present : absent) = base + alternatives(spec)[0];
      }
      if (present.empty()) return;
      // some of the parts only (a lone q_proj.bias): not "k_proj.bias is missing", which would send the user after
      // a tensor the model may not have at all
      if (!absent.empty())
        fail(where, "tensor " + in_quotes(present) + " is there without " + in_quotes(absent) + " (gradflow's " +
                        gradflow_name + " is made of both)",
             "if config.json gives the model no such tensor (e.g. attention_bias false), remove " + in_quotes(present) +
                 "; else the checkpoint is incomplete: download it again (every shard)");
    }
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
    ck.tensors.push_back(build(gradflow_name, src, r, ck.arch.heads.value_or(0), where));
    ck.source_names[gradflow_name] =
        names + (r.transpose ? " (transposed)" : r.per_head_qkv ? " (per head [q|k|v], regrouped)" : "");
    for (const SafeTensor* t : src) read.erase(t->name);  // each source feeds one tensor: the peak stays at one copy
  };
  for (const auto& [role, name] : ck.embedding_names) {
    SafeTensor t = std::move(read.at(name));
    read.erase(name);
    t.name = role;
    const bool vector = role.rfind("norm.", 0) == 0;
    if (t.shape.size() != (vector ? 1u : 2u) || t.data.empty())
      fail(where, "embedding tensor " + in_quotes(name) + " has shape " + shape_text(t.shape) + "; a non-empty " +
                      (vector ? "vector" : "matrix") + " is needed",
           "the checkpoint is damaged or not of this format; check --weights-format");
    ck.embeddings.push_back(std::move(t));
  }
  for (Index i = 0; i < m.layers; ++i)
    for (const auto& r : l.block)
      one("layers." + std::to_string(i) + "." + r.gradflow, r, prefix + l.layer_stem + std::to_string(i) + ".");
  if (m.final_norm)
    for (const auto& r : l.final_norm) one(r.gradflow, r, prefix);
  // The attention input projection must be (3d, d): q, k, v each (d, d). (A decoder family's widths come from
  // config.json: the model built from it checks every shape, naming the checkpoint's tensors.)
  if (l.decoder) return;
  const SafeTensor& in = ck.tensors[0];
  if (in.shape.size() != 2 || in.shape[0] != 3 * in.shape[1])
    fail(where, "tensor " + ck.source_names[in.name] + " gives q, k, v of shape " + shape_text(in.shape) +
                    " (gradflow's (3d, d)); each projection must be square",
         "the checkpoint is damaged or not of this format; check --weights-format");
}

}  // namespace gradflow::io_detail
