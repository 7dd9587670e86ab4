// checkpoint.cpp — --weights PATH in any supported format, read into gradflow's tensor names (checkpoint.hpp).
// Order: find the files (checkpoint_files.cpp: folder, config.json, model.safetensors or the index and its shards),
// read every header (never the data), choose the format (checkpoint_format.cpp), read what config.json fixes
// (hf_config.cpp), classify every tensor name (hf_name_map.cpp: block, final norm, outside the stack, or an error),
// then read only the block-stack tensors and map them (stack q/k/v, transpose Conv1D). Here: that order, what a
// load will hold, the embeddings of token ids, and the checkpoint's architecture applied to a model's options.
// Depends only on src/io and params (tests/io_fuzz compiles src/io/*.cpp alone).
#include "gradflow/io/checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <unordered_map>

#include "gradflow/core/error.hpp"
#include "gradflow/core/sha256.hpp"
#include "io/file_bytes.hpp"
#include "io/checkpoint_errors.hpp"
#include "io/checkpoint_files.hpp"
#include "io/checkpoint_format.hpp"
#include "io/hf_config.hpp"
#include "io/hf_layouts.hpp"
#include "io/hf_name_map.hpp"

namespace gradflow {

namespace {

using io_detail::fail;
using io_detail::HfLayout;
using io_detail::in_quotes;
using io_detail::printable;
using json = nlohmann::json;

std::string activation_name(Activation a) {
  return a == Activation::Relu ? "relu" : a == Activation::Gelu ? "gelu" : a == Activation::Silu ? "silu" : "gelu-tanh";
}

double numel_of(const SafeTensor& t) {
  double n = 1;
  for (int64_t d : t.shape) n *= static_cast<double>(d);
  return n;
}

// What reading will hold, from the headers: the tensors kept (the block stack, the embeddings) and the largest
// gradflow tensor, built while its sources are still held.
CheckpointLoad load_plan(const Checkpoint& ck, const io_detail::CheckpointFiles& f, const HfLayout* l,
                         const std::string& prefix, const std::vector<std::string>& needed) {
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
      for (const std::string& alt : io_detail::alternatives(spec)) {
        const auto it = header.find(prefix + l->layer_stem + "0." + alt);
        if (it != header.end()) values += numel_of(*it->second);
      }
    p.largest_values = std::max(p.largest_values, values);
  }
  return p;
}

// Checkpoint::sha256 (checkpoint.hpp): config.json's bytes and every tensor read (its gradflow name, dtype in the
// file, shape and float64 values, exact conversions of the file's), tensors then embeddings in reading order. Only
// what was read is hashed: a tensor the analysis never loads (GPT-2's wte without --token-ids) is not read for it.
std::string checkpoint_sha256(const Checkpoint& ck, const io_detail::CheckpointFiles& f) {
  Sha256 h;
  h.update(std::string("gradflow checkpoint digest 1\n"));
  if (!f.config.empty()) h.update("config.json " + io_detail::sha256_of_file(f.config) + "\n");
  for (const auto* list : {&ck.tensors, &ck.embeddings})
    for (const SafeTensor& t : *list) {
      std::string head = "tensor " + t.name + " " + t.dtype;
      for (int64_t d : t.shape) head += " " + std::to_string(d);
      h.update(head + "\n");
      h.update(t.data.data(), t.data.size() * sizeof(double));
    }
  return h.hex();
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
                           const std::function<void(const CheckpointLoad&)>& before_reading, bool with_output_head) {
  const auto& formats = weights_formats();
  if (std::find(formats.begin(), formats.end(), format) == formats.end()) {
    std::string list;
    for (const auto& f : formats) list += (list.empty() ? "" : " | ") + f;
    throw Error("--weights-format '" + printable(format) + "' is not one of " + list + "; fix: e.g. --weights-format auto");
  }
  Checkpoint ck;
  ck.path = path;
  const io_detail::CheckpointFiles f = io_detail::find_checkpoint_files(path);
  ck.files = f.shards;
  std::optional<json> config;
  if (!f.config.empty()) config = io_detail::read_json_object(f.config, "config.json");
  ck.format = io_detail::choose_format(path, format, f, config ? &*config : nullptr);
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
    ck.sha256 = checkpoint_sha256(ck, f);  // of what was read, after the checks and the memory guard
    return ck;
  }
  const HfLayout& l = *io_detail::find_hf_layout(ck.format);
  ck.config_path = f.config;
  const std::string prefix = io_detail::layout_prefix(l, f, path);
  const io_detail::MappedNames m = io_detail::classify_names(l, prefix, f, path);
  ck.outside = m.outside;
  ck.arch = l.decoder ? io_detail::decoder_arch(l, config ? &*config : nullptr, f.config)
                      : io_detail::hf_arch(l, config ? &*config : nullptr, f.config);
  if (with_embeddings) {
    ck.embedding_names =
        io_detail::embedding_names(l, prefix, f, path, with_output_head && l.decoder, ck.arch.tied_head);
    if (l.embeddings.roberta_positions) {
      ck.padding_idx = io_detail::roberta_padding_idx(config ? &*config : nullptr, f.config);
      ck.position_offset = ck.padding_idx + 1;
    }
  }
  if (before_reading) before_reading(load_plan(ck, f, &l, prefix, m.needed));
  io_detail::map_hf(ck, l, prefix, f, m);
  ck.sha256 = checkpoint_sha256(ck, f);
  return ck;
}

void load_checkpoint_params(const Checkpoint& c, ParamStore& store) {
  const std::vector<std::string> extra = load_params(store, c.tensors, c.path, &c.source_names);
  if (extra.empty()) return;
  if (c.format != "torch-encoder") {  // a Hugging Face checkpoint: its config.json gives the model no such tensor
    const auto it = c.source_names.find(extra.front());
    const std::string theirs = it == c.source_names.end() ? extra.front() : it->second;
    fail("--weights " + in_quotes(c.path) + " (" + c.format + ")",
         "tensor " + in_quotes(theirs) + " has no place in the model " +
             (c.config_path.empty() ? std::string("the family's defaults give") : "config.json " + in_quotes(c.config_path) + " gives") +
             " (a bias or QK-norm it does not have" + (extra.size() > 1 ? "; " + std::to_string(extra.size() - 1) + " more like it" : "") + ")",
         "restore the config.json saved with these tensors (e.g. its attention_bias, mlp_bias, qk-norm settings), or "
         "remove the tensors the model does not have");
  }
  constexpr size_t kShown = 8;
  std::string names;
  for (size_t i = 0; i < extra.size() && i < kShown; ++i) names += (i ? ", '" : "'") + extra[i] + "'";
  if (extra.size() > kShown) names += " and " + std::to_string(extra.size() - kShown) + " more";
  std::fprintf(stderr, "gradflow: warning: safetensors file '%s': %zu tensor%s the model does not use, ignored: %s\n",
               io_detail::printable(c.path, 200).c_str(), extra.size(), extra.size() == 1 ? "" : "s", names.c_str());
}

double checkpoint_kept_bytes(const Checkpoint& c) {
  double values = 0;
  for (const auto* list : {&c.tensors, &c.embeddings})
    for (const SafeTensor& t : *list) values += static_cast<double>(t.data.size());
  return values * sizeof(double);
}

namespace {
const SafeTensor* embedding(const Checkpoint& c, const std::string& role) {
  for (const SafeTensor& t : c.embeddings)
    if (t.name == role) return &t;
  return nullptr;
}
}  // namespace

std::vector<Index> token_positions(const Checkpoint& c, const std::vector<int64_t>& ids) {
  const SafeTensor* word = embedding(c, "word");
  const SafeTensor* pos = embedding(c, "position");
  if (!word)
    throw Error("internal: token_positions: the checkpoint was read without its embeddings", ErrorKind::Internal);
  const Index n = static_cast<Index>(ids.size());
  require(n > 0, "--token-ids is empty; fix: give at least one id, e.g. --token-ids 101,102");
  const Index vocab = word->shape[0];
  if (!pos) {  // RoPE: positions 0, 1, ... with no table to run out of
    std::vector<Index> out(static_cast<size_t>(n));
    for (Index t = 0; t < n; ++t) {
      const int64_t id = ids[static_cast<size_t>(t)];
      require(id >= 0 && id < vocab, "--token-ids: id " + std::to_string(id) + " (token " + std::to_string(t) +
                                         ") is outside the vocabulary of " + std::to_string(vocab) + " tokens of " +
                                         c.embedding_names.at("word") + "; fix: use ids from the checkpoint's tokenizer");
      out[static_cast<size_t>(t)] = t;
    }
    return out;
  }
  const Index positions = pos->shape[0];
  const std::string& pos_name = c.embedding_names.at("position");
  if (c.padding_idx >= 0)  // RoBERTa: the first token's position is padding_idx + 1, whatever the ids
    require(c.padding_idx + 1 < positions,
            "--weights '" + c.path + "': its pad_token_id " + std::to_string(c.padding_idx) + " puts the first " +
                "token at position " + std::to_string(c.padding_idx + 1) + ", but " + pos_name + " has " +
                std::to_string(positions) + " positions; fix: restore the config.json saved with the model (its "
                "pad_token_id must be below the number of positions minus one)");
  // ids that take a position of their own (RoBERTa: the padding ids share padding_idx), and how many fit
  const Index counted = c.padding_idx >= 0 ? n - static_cast<Index>(std::count(ids.begin(), ids.end(), c.padding_idx)) : n;
  const Index most = c.padding_idx >= 0 ? positions - c.padding_idx - 1 : positions;
  const std::string what = c.padding_idx >= 0 ? " ids besides padding" : " ids";
  require(counted <= most, "--token-ids: " + std::to_string(counted) + what + ", but " + pos_name + " has " +
                               std::to_string(positions) + " positions" +
                               (c.padding_idx >= 0 ? " (from pad_token_id + 1 = " + std::to_string(c.padding_idx + 1) +
                                                         " on)"
                                                   : std::string()) +
                               ", room for " + std::to_string(most) + "; fix: give at most " + std::to_string(most) +
                               what);
  std::vector<Index> out(static_cast<size_t>(n));
  Index seen = 0;  // RoBERTa: non-padding tokens so far
  for (Index t = 0; t < n; ++t) {
    const int64_t id = ids[static_cast<size_t>(t)];
    require(id >= 0 && id < vocab, "--token-ids: id " + std::to_string(id) + " (token " + std::to_string(t) +
                                       ") is outside the vocabulary of " + std::to_string(vocab) + " tokens of " +
                                       c.embedding_names.at("word") + "; fix: use ids from the checkpoint's tokenizer");
    Index p = t;
    if (c.padding_idx >= 0) p = id == c.padding_idx ? c.padding_idx : c.padding_idx + (++seen);
    out[static_cast<size_t>(t)] = p;  // below `positions`: at most padding_idx + n
  }
  return out;
}

Mat embed_tokens(const Checkpoint& c, const std::vector<int64_t>& ids, double word_scale) {
  const std::vector<Index> positions = token_positions(c, ids);  // the ids checked
  const SafeTensor* word = embedding(c, "word");
  const SafeTensor* pos = embedding(c, "position");
  const SafeTensor* type = embedding(c, "token_type");
  const SafeTensor* nw = embedding(c, "norm.weight");
  const SafeTensor* nb = embedding(c, "norm.bias");
  const Index n = static_cast<Index>(ids.size()), d = word->shape[1];
  for (const SafeTensor* t : {pos, type, nw, nb, embedding(c, "head")})
    if (t && t->shape.back() != d)
      throw Error("--weights '" + c.path + "': embedding " + c.embedding_names.at(t->name) + " has width " +
                  std::to_string(t->shape.back()) + " but the word embeddings have " + std::to_string(d) +
                  "; fix: restore the checkpoint");
  Mat x(n, d);
  for (Index t = 0; t < n; ++t) {
    const int64_t id = ids[static_cast<size_t>(t)];
    const Index p = positions[static_cast<size_t>(t)];
    const double* w = word->data.data() + id * d;
    const double* q = pos ? pos->data.data() + p * d : nullptr;  // none: RoPE
    for (Index k = 0; k < d; ++k) {
      double v = word_scale * w[k];  // --embed-scale (Gemma: √d)
      if (type) v += type->data[static_cast<size_t>(k)];  // token type 0 (BERT: word + type, then + position)
      x(t, k) = q ? v + q[k] : v;
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

void apply_decoder_arch(const CheckpointArch& a, ModelConfig& cfg) {
  cfg.placement = a.placement;
  cfg.causal = true;
  cfg.heads = a.heads.value_or(cfg.heads);
  cfg.kv_heads = a.kv_heads == cfg.heads ? 0 : a.kv_heads;
  cfg.head_dim = a.head_dim * cfg.heads == cfg.d_model ? 0 : a.head_dim;
  cfg.rope = true;
  cfg.rope_theta = a.rope_theta;
  cfg.rotary_fraction = a.rotary_fraction;
  cfg.qk_norm = a.qk_norm;
  cfg.attn_softcap = a.attn_softcap;
  cfg.attn_scale = a.attn_scale;
  cfg.ffn = a.ffn;
  if (a.ffn == FeedForwardKind::Mlp) cfg.activation = *a.activation;  // a gated branch's is fixed (ffn_activation)
  cfg.bias = a.bias;
  cfg.qkv_bias = a.qkv_bias;
  cfg.shared_norm = false;
  cfg.norm = a.norm;
  cfg.norm_eps = *a.norm_eps;
  cfg.norm_offset = a.norm_offset;
  cfg.embed_scale = 1.0;
  cfg.embed_scale_sqrt_d = a.embed_scale_sqrt_d;
  cfg.final_norm = true;
  cfg.residual_scale = 1.0;
}

void check_sliding_window(const Checkpoint& c, Index n) {
  const CheckpointArch& a = c.arch;
  if (a.sliding_window <= 0 || n <= a.sliding_window) return;
  throw Error("--weights " + in_quotes(c.path) + " (" + c.format + "): the " + std::to_string(n) + " tokens are more than "
              "the sliding window of " + std::to_string(a.sliding_window) + " tokens of " + a.sliding_layers +
              " (config.json's \"sliding_window\"), and gradflow's attention sees every earlier token; fix: analyze "
              "at most " + std::to_string(a.sliding_window) + " tokens, where the window changes nothing");
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
  for (const std::string& option : given.block_options)
    throw Error("--" + option + " contradicts " + by + " (its " + (c.config_path.empty() ? "format" : "config.json") +
                " fixes the block); fix: drop --" + option);
  if (given.placement && *given.placement != a.placement)
    throw Error("--placement " + *given.placement + " contradicts " + by + " (its block is " + a.placement +
                "); fix: drop --placement (the checkpoint fixes it)");
  if (given.causal && !*a.causal)
    throw Error("--causal contradicts " + by + " (bidirectional attention); fix: drop --causal");
  const NormKind norm = a.decoder ? a.norm : NormKind::LayerNorm;
  if (given.norm && *given.norm != norm)
    throw Error("--norm contradicts " + by + " (" + (norm == NormKind::RMSNorm ? "RMSNorm" : "LayerNorm") +
                "); fix: drop --norm (the checkpoint fixes it)");
  const std::string heads_key = c.format == "hf-gpt2" ? "n_head" : "num_attention_heads";
  if (a.heads) {
    if (!a.head_dim && s.d_model % *a.heads != 0)
      throw Error(a.source + " says " + heads_key + " = " + std::to_string(*a.heads) + ", which does not divide the "
                  "width d = " + std::to_string(s.d_model) + " of the tensors of " + in_quotes(c.path) +
                  "; fix: restore the config.json saved with these weights");
    if (given.heads && *given.heads != *a.heads)
      throw Error("--heads " + std::to_string(*given.heads) + " contradicts " + a.source + " (" +
                  std::to_string(*a.heads) + " heads); fix: drop --heads (the checkpoint fixes it)");
    cfg.heads = *a.heads;
  } else if (!given.heads && c.config_path.empty()) {
    throw Error(by + " has no config.json, and the number of attention heads is not in the tensors; fix: pass "
                "--heads (e.g. 12 for bert-base and gpt2), or name the checkpoint's folder with its config.json");
  } else if (!given.heads) {
    throw Error("config.json " + in_quotes(c.config_path) + " has no \"" + heads_key + "\" (the number of attention "
                "heads), which the tensors do not fix; fix: restore the config.json saved with the model, or pass "
                "--heads");
  }
  const bool gated = a.decoder && a.ffn != FeedForwardKind::Mlp;
  if (given.activation && (gated || *given.activation != *a.activation))
    throw Error("--activation " + activation_name(*given.activation) + " contradicts " + a.source + " (" +
                a.activation_name + (gated ? ", a gated feed-forward" : " = gradflow's " + activation_name(*a.activation)) +
                "); fix: drop --activation (the checkpoint fixes it)");
  if (a.decoder) {
    // the heads config.json gives must fill the q, k, v projections the tensors have (a num_key_value_heads or a
    // head_dim that disagrees is the config's, not an option's: none was given)
    const Index e = a.head_dim > 0 ? a.head_dim : s.d_model / cfg.heads, kv = a.kv_heads > 0 ? a.kv_heads : cfg.heads;
    for (const SafeTensor& t : c.tensors)
      if (t.name == "layers.0.self_attn.in_proj_weight" && !t.shape.empty()) {
        const long double want = static_cast<long double>(cfg.heads + 2 * kv) * static_cast<long double>(e);
        if (want != static_cast<long double>(t.shape[0]))
          throw Error(a.source + " says num_attention_heads = " + std::to_string(cfg.heads) + ", num_key_value_heads = " +
                      std::to_string(kv) + " and head_dim = " + std::to_string(e) + ", so (" + std::to_string(cfg.heads) +
                      " + 2*" + std::to_string(kv) + ")*" + std::to_string(e) + " rows of q, k and v, but the tensors of " +
                      in_quotes(c.path) + " (" + (c.source_names.count(t.name) ? c.source_names.at(t.name).substr(0, 120)
                                                                                : t.name) + ") have " +
                      std::to_string(t.shape[0]) + "; fix: restore the config.json saved with these weights");
      }
    apply_decoder_arch(a, cfg);
    return;
  }
  cfg.placement = a.placement;
  cfg.causal = *a.causal;
  cfg.activation = *a.activation;
  cfg.norm = NormKind::LayerNorm;
  cfg.norm_eps = *a.norm_eps;
}

}  // namespace gradflow

