// hf_config.cpp — what a Hugging Face config.json fixes (see hf_config.hpp).
#include "io/hf_config.hpp"

#include "io/checkpoint_errors.hpp"

namespace gradflow::io_detail {

using json = nlohmann::json;

namespace {

bool config_flag(const json* c, const std::string& key, bool fallback) {
  if (!c || !c->contains(key) || !(*c)[key].is_boolean()) return fallback;
  return (*c)[key].get<bool>();
}

}  // namespace

std::optional<Index> config_int(const json* c, const std::string& key, const std::string& path) {
  if (!c || key.empty() || !c->contains(key) || (*c)[key].is_null()) return std::nullopt;
  const json& v = (*c)[key];
  if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > (int64_t(1) << 40))
    fail("config.json " + in_quotes(path), in_quotes(key) + " is " + printable(v.dump(), 40) + ", not a positive integer",
         "restore the config.json saved with the model");
  return static_cast<Index>(v.get<int64_t>());
}

CheckpointArch hf_arch(const HfLayout& l, const json* c, const std::string& cpath) {
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

Index roberta_padding_idx(const json* c, const std::string& cpath) {
  if (!c || !c->contains("pad_token_id") || (*c)["pad_token_id"].is_null()) return 1;
  const json& v = (*c)["pad_token_id"];  // 0 is a valid id (positions then start at 1)
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > (int64_t(1) << 40))
    fail("config.json " + in_quotes(cpath), "\"pad_token_id\" is " + printable(v.dump(), 40) +
                                                ", not a non-negative integer",
         "restore the config.json saved with the model");
  return static_cast<Index>(v.get<int64_t>());
}

}  // namespace gradflow::io_detail
