// config.cpp — validation of model options, with one-line errors naming the option and the fix.
#include "gradflow/model/config.hpp"

#include <cmath>
#include <cstdlib>

#include "gradflow/core/error.hpp"
#include "gradflow/model/placement.hpp"

namespace gradflow {

void ModelConfig::validate() const {
  require(layers > 0, "--layers must be positive (got " + std::to_string(layers) + "); fix: e.g. --layers 24");
  require(d_model > 0, "--d-model must be positive (got " + std::to_string(d_model) + "); fix: e.g. --d-model 64");
  require(heads > 0, "--heads must be positive (got " + std::to_string(heads) + "); fix: e.g. --heads 4");
  require(d_model % heads == 0, "--heads " + std::to_string(heads) + " does not divide --d-model " +
                                    std::to_string(d_model) + "; fix: choose heads that divide d_model (e.g. " +
                                    std::to_string(d_model % 4 == 0 ? 4 : 1) + ")");
  require(d_ff >= 0, "--d-ff must be positive (got " + std::to_string(d_ff) + "); fix: omit it for 4·d_model");
  require(std::isfinite(residual_scale), "--residual-scale must be a finite number; fix: e.g. --residual-scale 1");
  require(norm_eps > 0, "norm eps must be positive");
  require(!qkv_bias || !bias, "--qkv-bias adds q, k, v biases to a model without biases, but every linear layer has "
                              "one; fix: add --bias off (Qwen2: only q, k, v have biases), or drop --qkv-bias");
  require(!shared_norm || placement == "parallel", "--shared-norm is an option of --placement parallel (one norm "
                                                   "feeding both branches), not of " + placement +
                                                   "; fix: add --placement parallel, or drop --shared-norm");
  for (const auto& o : scheme_options()) {
    if (o.type == SchemeOption::Type::Word) {
      const std::string v = scheme.word(o.name, o.words.front());
      std::string list;
      bool known = false;
      for (const auto& w : o.words) {
        known = known || w == v;
        list += (list.empty() ? "" : " or ") + w;
      }
      require(known, "--" + o.name + " '" + v + "' is unknown; fix: use " + list);
    }
    if (o.check && scheme.given(o.name)) o.check(*this);
  }
}

FeedForwardKind parse_ffn(const std::string& name) {
  if (name == "mlp") return FeedForwardKind::Mlp;
  if (name == "swiglu") return FeedForwardKind::SwiGLU;
  if (name == "geglu") return FeedForwardKind::GeGLU;
  throw Error("unknown feed-forward '" + name + "'; fix: use --ffn mlp, swiglu or geglu");
}

Activation ModelConfig::ffn_activation() const {
  if (ffn == FeedForwardKind::SwiGLU) return Activation::Silu;
  if (ffn == FeedForwardKind::GeGLU) return Activation::GeluTanh;
  return activation;
}

double SchemeValues::number(const std::string& name, double fallback) const {
  const auto it = numbers.find(name);
  return it == numbers.end() ? fallback : it->second;
}
Index SchemeValues::count(const std::string& name, Index fallback) const {
  const auto it = counts.find(name);
  return it == counts.end() ? fallback : it->second;
}
std::string SchemeValues::word(const std::string& name, const std::string& fallback) const {
  const auto it = words.find(name);
  return it == words.end() ? fallback : it->second;
}
bool SchemeValues::given(const std::string& name) const {
  return numbers.count(name) != 0 || counts.count(name) != 0 || words.count(name) != 0;
}

double parse_init_scale(const std::string& text, Index layers) {
  if (text == "inv-sqrt-2L") return 1.0 / std::sqrt(2.0 * static_cast<double>(layers));
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  require(end != text.c_str() && *end == '\0' && std::isfinite(v) && v > 0,
          "--init-scale '" + text + "' is not a positive number; fix: e.g. --init-scale 0.5 or --init-scale inv-sqrt-2L");
  return v;
}

}  // namespace gradflow
