// hf_export.cpp — gradflow's parameters written as a Hugging Face checkpoint folder (checkpoint.hpp:
// write_hf_checkpoint): the name maps of hf_layouts.cpp run backwards (in_proj split into q, k, v for BERT;
// Conv1D weights transposed for GPT-2; the final norm as ln_f), plus the config.json that fixes the architecture.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "gradflow/core/error.hpp"
#include "gradflow/io/checkpoint.hpp"
#include "io/file_bytes.hpp"
#include "io/hf_layouts.hpp"

namespace gradflow {

namespace {

std::string hf_activation(Activation a, const std::string& format) {
  if (a == Activation::Relu) return "relu";
  if (a == Activation::Gelu) return "gelu";
  return format == "hf-gpt2" ? "gelu_new" : "gelu_pytorch_tanh";
}

// Rows [k·r, (k+1)·r) of `t` (the k-th of `parts` equal row blocks), or its transpose.
SafeTensor part_of(const SafeTensor& t, size_t k, size_t parts, bool transpose, const std::string& name) {
  const int64_t rows = t.shape[0] / static_cast<int64_t>(parts);
  const int64_t cols = t.shape.size() == 2 ? t.shape[1] : 1;
  SafeTensor out{name, "F64", t.shape, {}};
  out.shape[0] = rows;
  const auto begin = t.data.begin() + static_cast<std::ptrdiff_t>(static_cast<int64_t>(k) * rows * cols);
  out.data.assign(begin, begin + static_cast<std::ptrdiff_t>(rows * cols));
  if (!transpose || t.shape.size() != 2) return out;
  SafeTensor tr{name, "F64", {cols, rows}, std::vector<double>(out.data.size())};
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) tr.data[static_cast<size_t>(c * rows + r)] = out.data[static_cast<size_t>(r * cols + c)];
  return tr;
}

}  // namespace

void write_hf_checkpoint(const std::string& dir, const std::string& format, const std::vector<SafeTensor>& tensors,
                         const ModelConfig& cfg) {
  const io_detail::HfLayout* l = io_detail::find_hf_layout(format);
  if (!l) throw Error("--format '" + format + "' is not a Hugging Face layout; fix: use hf-bert, hf-roberta or hf-gpt2");
  bool final_norm = false;  // the model has one iff it has norm.* parameters (the placement decides by default)
  for (const SafeTensor& t : tensors) final_norm = final_norm || t.name.rfind("norm.", 0) == 0;
  const std::string model = "--placement " + cfg.placement + (cfg.causal ? " --causal" : "") +
                            (final_norm ? " with a final norm" : " without a final norm");
  const bool fits = cfg.placement == l->placement && cfg.causal == l->causal && cfg.norm == NormKind::LayerNorm &&
                    final_norm == !l->final_norm.empty() && cfg.residual_scale == 1.0;
  if (!fits)
    throw Error("--format " + format + " writes " + l->note + " (--placement " + l->placement +
                (l->causal ? " --causal" : "") + ", LayerNorm" + (l->final_norm.empty() ? "" : ", final norm") +
                ", residual scale 1), but the model is " + model + "; fix: build the model with those options");
  // the layout's blocks: a plain feed-forward with relu or a gelu, and every bias
  require(!cfg.gated() && cfg.bias && cfg.activation != Activation::Silu && !cfg.norm_offset,
          "--format " + format + " writes " + l->note + " with biases, plain norm weights and a " +
          (format == "hf-gpt2" ? "gelu" : "relu or gelu") + " feed-forward, but the model has " +
          (cfg.gated() ? "--ffn " + to_string(cfg.ffn)
           : !cfg.bias ? std::string("--bias off")
           : cfg.norm_offset ? std::string("--norm-offset") : std::string("--activation silu")) +
          "; fix: export it with --format torch-encoder (gradflow's names), or build it without that option");
  std::map<std::string, const SafeTensor*> by_name;
  for (const SafeTensor& t : tensors) by_name[t.name] = &t;
  std::set<std::string> used;
  std::vector<SafeTensor> out;
  const auto emit = [&](const std::string& gradflow_name, const io_detail::TensorRule& r, const std::string& base) {
    const auto it = by_name.find(gradflow_name);
    if (it == by_name.end())
      throw Error("internal: write_hf_checkpoint: parameter '" + gradflow_name + "' is missing", ErrorKind::Internal);
    used.insert(gradflow_name);
    for (size_t k = 0; k < r.sources.size(); ++k) {
      const std::string first = r.sources[k].substr(0, r.sources[k].find('|'));  // the current spelling
      out.push_back(part_of(*it->second, k, r.sources.size(), r.transpose, base + first));
    }
  };
  for (Index i = 0; i < cfg.layers; ++i)
    for (const auto& r : l->block) emit("layers." + std::to_string(i) + "." + r.gradflow, r, l->layer_stem + std::to_string(i) + ".");
  for (const auto& r : l->final_norm) emit(r.gradflow, r, "");
  for (const SafeTensor& t : tensors)
    if (!used.count(t.name))
      throw Error("--format " + format + ": the model's parameter '" + t.name + "' has no place in " + l->note +
                  "; fix: build the model with --placement " + l->placement + " and no extras");

  nlohmann::ordered_json c;
  const ModelConfig& m = cfg;
  c["model_type"] = l->config.model_type;
  c["architectures"] = {format == "hf-gpt2" ? "GPT2Model" : format == "hf-roberta" ? "RobertaModel" : "BertModel"};
  c[l->config.d_model] = m.d_model;
  c[l->config.heads] = m.heads;
  c[l->config.layers] = m.layers;
  c[l->config.d_ff] = m.ff();
  c[l->config.activation] = hf_activation(m.activation, format);
  c[l->config.norm_eps] = m.norm_eps;
  c["torch_dtype"] = "float64";
  c["gradflow_note"] = "block stack only (no embeddings or heads): written by gradflow export --format " + format;

  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw Error("--out '" + dir + "' is not a folder; fix: name a folder (created when missing) for --format " + format);
  fs::create_directories(dir, ec);
  if (ec) throw Error("cannot create the folder '" + dir + "': " + ec.message() + "; fix: choose a writable path");
  write_safetensors((fs::path(dir) / "model.safetensors").string(), out);
  io_detail::write_file_atomic((fs::path(dir) / "config.json").string(), c.dump(2) + "\n");
}

}  // namespace gradflow
