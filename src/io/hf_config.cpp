// hf_config.cpp — what a Hugging Face config.json fixes (see hf_config.hpp).
#include "io/hf_config.hpp"

#include <cmath>

#include "io/checkpoint_errors.hpp"

namespace gradflow::io_detail {

using json = nlohmann::json;

bool ConfigReader::present(const std::string& key) const {
  return c_ && !key.empty() && c_->contains(key) && !(*c_)[key].is_null();
}

void ConfigReader::wrong(const std::string& key, const std::string& must_be) const {
  fail(where(), "\"" + printable(key, 60) + "\" is " + printable((*c_)[key].dump(), 40) + ", not " + must_be,
       "restore the config.json saved with the model");
}

namespace {
// An integer in [lowest, 2^40], else the reader's error with `must_be`.
std::optional<Index> int_at_least(const ConfigReader& r, const std::string& key, int64_t lowest,
                                  const std::string& must_be) {
  if (!r.present(key)) return std::nullopt;
  const json& v = (*r.json())[key];
  if (!v.is_number_integer() || v.get<int64_t>() < lowest || v.get<int64_t>() > (int64_t(1) << 40))
    r.wrong(key, must_be);
  return static_cast<Index>(v.get<int64_t>());
}
}  // namespace

std::optional<Index> ConfigReader::positive_int(const std::string& key) const {
  return int_at_least(*this, key, 1, "a positive integer");
}

std::optional<Index> ConfigReader::non_negative_int(const std::string& key) const {
  return int_at_least(*this, key, 0, "a non-negative integer");
}

std::optional<double> ConfigReader::positive_number(const std::string& key) const {
  if (!present(key)) return std::nullopt;
  const nlohmann::json& v = (*c_)[key];
  if (!v.is_number() || !(v.get<double>() > 0.0) || !std::isfinite(v.get<double>())) wrong(key, "a positive number");
  return v.get<double>();
}

std::optional<double> ConfigReader::fraction(const std::string& key) const {
  const std::optional<double> v = positive_number(key);
  if (v && *v > 1.0) wrong(key, "a fraction in (0, 1]");
  return v;
}

std::optional<bool> ConfigReader::boolean(const std::string& key) const {
  if (!present(key)) return std::nullopt;
  if (!(*c_)[key].is_boolean()) wrong(key, "true or false");
  return (*c_)[key].get<bool>();
}

std::optional<std::string> ConfigReader::string(const std::string& key) const {
  if (!present(key)) return std::nullopt;
  if (!(*c_)[key].is_string()) wrong(key, "a string");
  return (*c_)[key].get<std::string>();
}

const nlohmann::json* ConfigReader::object(const std::string& key) const {
  if (!present(key)) return nullptr;
  if (!(*c_)[key].is_object()) wrong(key, "an object");
  return &(*c_)[key];
}

const nlohmann::json* ConfigReader::list(const std::string& key) const {
  if (!present(key)) return nullptr;
  if (!(*c_)[key].is_array()) wrong(key, "a list");
  return &(*c_)[key];
}

std::optional<Index> config_int(const json* c, const std::string& key, const std::string& path) {
  return ConfigReader(c, path).positive_int(key);
}

CheckpointArch hf_arch(const HfLayout& l, const json* c, const std::string& cpath) {
  const ConfigReader r(c, cpath);
  CheckpointArch a;
  a.placement = l.placement;
  a.causal = l.causal;
  a.source = c ? r.where() : "the " + l.format + " defaults (no config.json)";
  const std::string where = r.where();
  a.d_model = r.positive_int(l.config.d_model);
  a.heads = r.positive_int(l.config.heads);
  a.layers = r.positive_int(l.config.layers);
  a.d_ff = r.positive_int(l.config.d_ff);
  if (!a.d_ff && a.d_model && l.format == "hf-gpt2") a.d_ff = 4 * *a.d_model;  // n_inner null: 4·n_embd
  a.activation_name = r.string(l.config.activation)
                          .value_or(l.default_activation == "gelu-tanh" ? "gelu_new" : l.default_activation);
  const std::string& an = a.activation_name;
  if (an == "gelu") a.activation = Activation::Gelu;
  else if (an == "gelu_new" || an == "gelu_pytorch_tanh") a.activation = Activation::GeluTanh;
  else if (an == "relu") a.activation = Activation::Relu;
  else
    fail(where, in_quotes(l.config.activation) + " is " + in_quotes(an) +
                    ", which gradflow does not have (gelu, gelu_new, gelu_pytorch_tanh and relu it has)",
         "analyze a checkpoint with one of these activations");
  a.norm_eps = r.positive_number(l.config.norm_eps).value_or(l.default_norm_eps);
  // settings that change the block's equations beyond what gradflow's block computes
  const auto refuse = [&](bool bad, const std::string& what) {
    if (bad) fail(where, what + ", which gradflow's " + l.placement + " block does not compute",
                  "analyze a checkpoint without it");
  };
  refuse(r.boolean("add_cross_attention").value_or(false), "\"add_cross_attention\" is true (cross-attention layers)");
  if (l.format == "hf-gpt2") {
    refuse(!r.boolean("scale_attn_weights").value_or(true), "\"scale_attn_weights\" is false (unscaled scores)");
    refuse(r.boolean("scale_attn_by_inverse_layer_idx").value_or(false),
           "\"scale_attn_by_inverse_layer_idx\" is true (scores / (layer + 1))");
  } else {
    refuse(r.boolean("is_decoder").value_or(false), "\"is_decoder\" is true (a causal BERT)");
    const std::string positions = r.string("position_embedding_type").value_or("absolute");
    refuse(positions != "absolute", "\"position_embedding_type\" is '" + printable(positions, 40) +
                                        "' (relative position scores inside attention)");
  }
  return a;
}

Index roberta_padding_idx(const json* c, const std::string& cpath) {
  // 0 is a valid id (positions then start at 1); 1 when config.json does not say
  return ConfigReader(c, cpath).non_negative_int("pad_token_id").value_or(1);
}

}  // namespace gradflow::io_detail
