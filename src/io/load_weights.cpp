// load_weights.cpp — see load_weights.hpp. Depends only on the io readers and ParamStore (so the sanitizer
// build of tests/io_fuzz, which compiles src/io/*.cpp alone, still links).
#include "gradflow/io/load_weights.hpp"

#include <unordered_map>

#include "gradflow/core/error.hpp"
#include "io/file_bytes.hpp"

namespace gradflow {

namespace {

using io_detail::printable;

const char* const kFixNames =
    "save the state_dict of an nn.TransformerEncoder (names layers.{i}.self_attn.in_proj_weight, ..., norm.weight; "
    "strip any prefix such as 'encoder.'); `gradflow export` writes the names the model expects";

[[noreturn]] void fail(const std::string& path, const std::string& what, const std::string& fix = kFixNames) {
  throw Error("safetensors file '" + path + "': " + what + "; fix: " + fix);
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// i for a name "layers.{i}.rest" (i decimal, no sign, at most 6 digits); -1 for any other name.
Index layer_index(const std::string& name) {
  const std::string prefix = "layers.";
  if (name.compare(0, prefix.size(), prefix) != 0) return -1;
  size_t k = prefix.size();
  Index i = 0;
  while (k < name.size() && name[k] >= '0' && name[k] <= '9' && k - prefix.size() < 6) i = 10 * i + (name[k++] - '0');
  if (k == prefix.size() || k >= name.size() || name[k] != '.') return -1;
  return i;
}

const SafeTensor& find_2d(const std::vector<SafeTensor>& tensors, const std::string& name, const std::string& path,
                          const std::string& needed_for) {
  for (const auto& t : tensors)
    if (t.name == name) {
      if (t.shape.size() != 2 || t.shape[0] <= 0 || t.shape[1] <= 0)
        fail(path, "tensor '" + name + "' has shape " + shape_str(t.shape) + " but must be a non-empty matrix (" +
                       needed_for + ")");
      return t;
    }
  fail(path, "tensor '" + name + "' is missing (" + needed_for + ")");
}

}  // namespace

CheckpointSizes checkpoint_sizes(const std::vector<SafeTensor>& tensors, const std::string& path) {
  CheckpointSizes s;
  for (const auto& t : tensors) {
    const Index i = layer_index(t.name);
    if (i >= 0 && i + 1 > s.layers) s.layers = i + 1;
    if (t.name.compare(0, 5, "norm.") == 0) s.final_norm = true;
  }
  if (s.layers == 0) fail(path, "no tensor is named layers.{i}.* (" + std::to_string(tensors.size()) + " tensors)");
  const SafeTensor& in = find_2d(tensors, "layers.0.self_attn.in_proj_weight", path, "it fixes d_model: shape [3d, d]");
  s.d_model = in.shape[1];
  // rows q, k, v: 3d for nn.MultiheadAttention; (h + 2K)·e with --kv-heads/--head-dim, checked against the model's
  // shape when the tensors are loaded (load_params names both)
  const SafeTensor& l1 = find_2d(tensors, "layers.0.linear1.weight", path, "it fixes d_ff: shape [d_ff, d]");
  if (in.shape[0] == l1.shape[1] && in.shape[1] != l1.shape[1])
    fail(path, "tensor 'layers.0.self_attn.in_proj_weight' has shape " + shape_str(in.shape) + " but must be [" +
                   std::to_string(in.shape[1]) + ", " + std::to_string(in.shape[0]) + "] (rows q, k, v; d = " +
                   std::to_string(l1.shape[1]) + " from linear1.weight): it looks transposed",
         "save the weights as PyTorch stores them (nn.Linear: [out_features, in_features])");
  s.d_ff = l1.shape[0];
  if (l1.shape[1] != s.d_model)
    fail(path, "tensor 'layers.0.linear1.weight' has shape " + shape_str(l1.shape) + " but must be [d_ff, d] with d = " +
                   std::to_string(s.d_model) + " (from in_proj_weight)" +
                   (l1.shape[0] == s.d_model ? ": it looks transposed" : ""),
         "save the nn.TransformerEncoder's state_dict as it is (nn.Linear stores [out_features, in_features])");
  return s;
}

void apply_checkpoint_sizes(const CheckpointSizes& s, const GivenSizes& given, const std::string& path,
                            ModelConfig& cfg) {
  const std::string file = "'" + path + "'";
  const auto check = [&](const std::optional<Index>& opt, Index file_value, const std::string& option,
                         const std::string& what) {
    if (opt && *opt != file_value)
      throw Error(option + " " + std::to_string(*opt) + " contradicts " + what + " " + std::to_string(file_value) +
                  " of the checkpoint " + file + "; fix: drop " + option + " (the checkpoint fixes it) or pass " +
                  option + " " + std::to_string(file_value));
  };
  check(given.layers, s.layers, "--layers", "the number of layers");
  check(given.d_model, s.d_model, "--d-model", "d_model");
  check(given.d_ff, s.d_ff, "--d-ff", "d_ff");
  if (given.final_norm && *given.final_norm != s.final_norm)
    throw Error(std::string(s.final_norm ? "--no-final-norm contradicts the final norm (norm.*) of the checkpoint "
                                         : "a final norm was asked for but the checkpoint has no norm.* tensors: ") +
                file + "; fix: drop " + (s.final_norm ? "--no-final-norm" : "the final-norm option") +
                " (the checkpoint fixes it)");
  cfg.layers = s.layers;
  cfg.d_model = s.d_model;
  cfg.d_ff = s.d_ff;
  cfg.final_norm = s.final_norm;
}

std::vector<std::string> load_params(ParamStore& store, const std::vector<SafeTensor>& tensors,
                                     const std::string& path, const std::map<std::string, std::string>* sources) {
  const auto from = [&](const std::string& name) -> std::string {
    if (!sources) return "";
    const auto it = sources->find(name);
    return it == sources->end() ? "" : " (the checkpoint's " + it->second + ")";
  };
  std::unordered_map<std::string, const SafeTensor*> by_name;
  for (const auto& t : tensors) by_name.emplace(t.name, &t);
  for (Param& p : store.all()) {
    const auto it = by_name.find(p.name);
    if (it == by_name.end()) {
      if (sources)  // a Hugging Face checkpoint: its config.json, not an option, gave the model this parameter
        throw Error("--weights '" + printable(path) + "': the model its config.json gives has gradflow's '" + p.name +
                    "' of shape " + shape_str(p.shape) + ", which none of the checkpoint's tensors holds; fix: check "
                    "config.json's model_type and its bias and QK-norm keys (e.g. attention_bias) against the "
                    "tensors: restore the config.json saved with them");
      fail(path, "tensor '" + p.name + "' of shape " + shape_str(p.shape) + " is missing (the model with these "
                     "--placement/--norm options needs it)");
    }
    const SafeTensor& t = *it->second;
    const bool scalar_ok = p.shape == std::vector<int64_t>{1} && t.shape.empty();
    const bool transposed = t.shape.size() == 2 && p.shape.size() == 2 && t.shape[0] == p.shape[1] &&
                            t.shape[1] == p.shape[0];
    if (t.shape != p.shape && !scalar_ok)
      fail(path, "tensor '" + p.name + "'" + from(p.name) + " has shape " + shape_str(t.shape) + " but the model needs " +
                     shape_str(p.shape) + (transposed ? ": it looks transposed" : ""),
           transposed ? "save the weights as PyTorch stores them (nn.Linear: [out_features, in_features])"
           : sources ? "the checkpoint's config.json fixes these shapes (hidden_size, num_attention_heads, "
                       "num_key_value_heads, head_dim, intermediate_size): restore the config.json saved with these "
                       "tensors"
                     : "check --heads/--kv-heads/--head-dim/--ffn/--bias/--placement/--norm, or re-save the matching "
                       "state_dict");
    // p.value is (rows, cols) row-major with rows*cols == product(shape) == t.data.size().
    p.value = ConstMatMap(t.data.data(), p.value.rows(), p.value.cols());
  }
  std::vector<std::string> extra;
  for (const auto& t : tensors)
    if (!store.has(t.name)) extra.push_back(printable(t.name));
  return extra;
}

}  // namespace gradflow
