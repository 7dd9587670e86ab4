// hf_export.cpp — gradflow's parameters written as a Hugging Face checkpoint folder (checkpoint.hpp:
// write_hf_checkpoint): the name maps of hf_layouts.cpp run backwards (in_proj split into q, k, v for BERT and the
// decoders, of widths h·e, K·e, K·e; Conv1D weights transposed for GPT-2; GPT-NeoX's rows regrouped per head; the
// final norm), plus the config.json that fixes the architecture (a decoder's: hf_decoder_export.cpp).
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "gradflow/core/error.hpp"
#include "gradflow/io/checkpoint.hpp"
#include "io/file_bytes.hpp"
#include "io/hf_decoder_export.hpp"
#include "io/hf_layouts.hpp"
#include "io/staged_files.hpp"

namespace gradflow {

namespace {

std::string hf_activation(Activation a, const std::string& format) {
  if (a == Activation::Relu) return "relu";
  if (a == Activation::Gelu) return "gelu";
  return format == "hf-gpt2" ? "gelu_new" : "gelu_pytorch_tanh";
}

// Rows [first, first + rows) of `t`, or their transpose.
SafeTensor part_of(const SafeTensor& t, int64_t first, int64_t rows, bool transpose, const std::string& name) {
  const int64_t cols = t.shape.size() == 2 ? t.shape[1] : 1;
  SafeTensor out{name, "F64", t.shape, {}};
  out.shape[0] = rows;
  const auto begin = t.data.begin() + static_cast<std::ptrdiff_t>(first * cols);
  out.data.assign(begin, begin + static_cast<std::ptrdiff_t>(rows * cols));
  if (!transpose || t.shape.size() != 2) return out;
  SafeTensor tr{name, "F64", {cols, rows}, std::vector<double>(out.data.size())};
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) tr.data[static_cast<size_t>(c * rows + r)] = out.data[static_cast<size_t>(r * cols + c)];
  return tr;
}

// GPT-NeoX's fused layout from gradflow's: rows [q_0 ... q_{h-1} | k_0 ... | v_0 ...] -> per head [q_j | k_j | v_j].
SafeTensor per_head_qkv(const SafeTensor& t, Index heads, const std::string& name) {
  const int64_t rows = t.shape[0], cols = t.shape.size() == 2 ? t.shape[1] : 1;
  return SafeTensor{name, "F64", t.shape, io_detail::regroup_qkv(t.data, rows, cols, heads, false)};
}

// The rows of each source of a rule: q, k, v of widths h·e, K·e, K·e (BERT: d each), else the whole tensor.
std::vector<int64_t> source_rows(const SafeTensor& t, size_t parts, const ModelConfig& cfg) {
  if (parts == 1) return {t.shape[0]};
  if (parts == 3 && t.shape[0] == cfg.qkv_width()) {
    const int64_t q = cfg.q_width(), kv = cfg.kv() * cfg.hd();
    return {q, kv, kv};
  }
  throw Error("internal: write_hf_checkpoint: cannot split '" + t.name + "' into " + std::to_string(parts) + " parts",
              ErrorKind::Internal);
}

// BERT, RoBERTa, GPT-2: the model must be the family's block.
void check_classic_fits(const io_detail::HfLayout& l, const ModelConfig& cfg, bool final_norm) {
  const std::string& format = l.format;
  const std::string model = "--placement " + cfg.placement + (cfg.causal ? " --causal" : "") +
                            (final_norm ? " with a final norm" : " without a final norm");
  const bool fits = cfg.placement == l.placement && cfg.causal == l.causal && cfg.norm == NormKind::LayerNorm &&
                    final_norm == !l.final_norm.empty() && cfg.residual_scale == 1.0;
  if (!fits)
    throw Error("--format " + format + " writes " + l.note + " (--placement " + l.placement +
                (l.causal ? " --causal" : "") + ", LayerNorm" + (l.final_norm.empty() ? "" : ", final norm") +
                ", residual scale 1), but the model is " + model + "; fix: build the model with those options");
  // the layout's blocks: a plain feed-forward with relu or a gelu, and every bias
  require(!cfg.gated() && cfg.bias && cfg.activation != Activation::Silu && !cfg.norm_offset,
          "--format " + format + " writes " + l.note + " with biases, plain norm weights and a " +
          (format == "hf-gpt2" ? "gelu" : "relu or gelu") + " feed-forward, but the model has " +
          (cfg.gated() ? "--ffn " + to_string(cfg.ffn)
           : !cfg.bias ? std::string("--bias off")
           : cfg.norm_offset ? std::string("--norm-offset") : std::string("--activation silu")) +
          "; fix: export it with --format torch-encoder (gradflow's names), or build it without that option");
}

nlohmann::ordered_json classic_config_json(const io_detail::HfLayout& l, const ModelConfig& m) {
  nlohmann::ordered_json c;
  c["model_type"] = l.config.model_type;
  c["architectures"] = {l.architecture};
  c[l.config.d_model] = m.d_model;
  c[l.config.heads] = m.heads;
  c[l.config.layers] = m.layers;
  c[l.config.d_ff] = m.ff();
  c[l.config.activation] = hf_activation(m.activation, l.format);
  c[l.config.norm_eps] = m.norm_eps;
  c["torch_dtype"] = "float64";
  c["gradflow_note"] = "block stack only (no embeddings or heads): written by gradflow export --format " + l.format;
  return c;
}

}  // namespace

void write_hf_checkpoint(const std::string& dir, const std::string& format, const std::vector<SafeTensor>& tensors,
                         const ModelConfig& cfg) {
  const io_detail::HfLayout* l = io_detail::find_hf_layout(format);
  if (!l) {
    std::string known;
    for (const io_detail::HfLayout& h : io_detail::hf_layouts()) known += (known.empty() ? "" : ", ") + h.format;
    throw Error("--format '" + format + "' is not a Hugging Face layout; fix: use one of " + known);
  }
  // a parametrization's branch, logit and readout multipliers have no field in a Hugging Face config.json
  require(!cfg.param.scales_width(),
          "--format " + format + " cannot hold --parametrization " + to_string(cfg.param.kind) + "'s multipliers "
          "(the family's config.json has no field for them); fix: export with --format torch-encoder and give the same "
          "--parametrization, --base-width and --base-depth when loading it");
  bool final_norm = false;  // the model has one iff it has norm.* parameters (the placement decides by default)
  for (const SafeTensor& t : tensors) final_norm = final_norm || t.name.rfind("norm.", 0) == 0;
  nlohmann::ordered_json c;
  if (l->decoder) {
    c = io_detail::decoder_config_json(*l, cfg);
    io_detail::check_decoder_fits(*l, cfg, c, final_norm);
  } else {
    check_classic_fits(*l, cfg, final_norm);
    c = classic_config_json(*l, cfg);
  }
  std::map<std::string, const SafeTensor*> by_name;
  for (const SafeTensor& t : tensors) by_name[t.name] = &t;
  std::set<std::string> used;
  std::vector<SafeTensor> out;
  const auto emit = [&](const std::string& gradflow_name, const io_detail::TensorRule& r, const std::string& base) {
    const auto it = by_name.find(gradflow_name);
    if (it == by_name.end())
      throw Error("internal: write_hf_checkpoint: parameter '" + gradflow_name + "' is missing", ErrorKind::Internal);
    used.insert(gradflow_name);
    const SafeTensor& t = *it->second;
    if (r.per_head_qkv) {
      out.push_back(per_head_qkv(t, cfg.heads, base + r.sources[0]));
      return;
    }
    const std::vector<int64_t> rows = source_rows(t, r.sources.size(), cfg);
    int64_t first = 0;
    for (size_t k = 0; k < r.sources.size(); ++k) {
      const std::string spelling = r.sources[k].substr(0, r.sources[k].find('|'));  // the current spelling
      out.push_back(part_of(t, first, rows[k], r.transpose, base + spelling));
      first += rows[k];
    }
  };
  const std::string prefix = l->decoder ? l->prefixes.back() : "";  // model. / gpt_neox., as *ForCausalLM saves them
  for (Index i = 0; i < cfg.layers; ++i)
    for (const auto& r : l->block) {
      const std::string name = "layers." + std::to_string(i) + "." + r.gradflow;
      if (r.optional && !by_name.count(name)) continue;  // a bias or QK-norm this model does not have
      emit(name, r, prefix + l->layer_stem + std::to_string(i) + ".");
    }
  for (const auto& r : l->final_norm) emit(r.gradflow, r, prefix);
  for (const SafeTensor& t : tensors)
    if (!used.count(t.name))
      throw Error("--format " + format + ": the model's parameter '" + t.name + "' has no place in " + l->note +
                  "; fix: build the model with --placement " + l->placement + " and no extras");

  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw Error("--out '" + dir + "' is not a folder; fix: name a folder (created when missing) for --format " + format);
  fs::create_directories(dir, ec);
  if (ec) throw Error("cannot create the folder '" + dir + "': " + ec.message() + "; fix: choose a writable path");
  // both files staged, then renamed in as one unit: an error or interrupt leaves the folder's old pair (and any
  // other file in it, e.g. a tokenizer) as it was (staged_files.hpp)
  std::vector<io_detail::StagedFile> staged;
  try {
    staged.push_back(io_detail::stage_safetensors((fs::path(dir) / "model.safetensors").string(), out));
    const std::string config = c.dump(2) + "\n";
    staged.push_back(io_detail::stage_file((fs::path(dir) / "config.json").string(), {{config.data(), config.size()}}));
  } catch (...) {
    io_detail::discard_staged(staged);
    throw;
  }
  io_detail::commit_staged(staged, "the folder '" + io_detail::printable(dir, 200) + "' holds the new export (model.safetensors and config.json)");
}

}  // namespace gradflow
