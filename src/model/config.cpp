// config.cpp — validation of model options, with one-line errors naming the option and the fix.
#include "gradflow/model/config.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "gradflow/core/decimal.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/model/placement.hpp"

namespace gradflow {

void ModelConfig::validate() const {
  require(layers > 0, "--layers must be positive (got " + std::to_string(layers) + "); fix: e.g. --layers 24");
  require(d_model > 0, "--d-model must be positive (got " + std::to_string(d_model) + "); fix: e.g. --d-model 64");
  require(heads > 0, "--heads must be positive (got " + std::to_string(heads) + "); fix: e.g. --heads 4");
  require(head_dim > 0 || d_model % heads == 0,
          "--heads " + std::to_string(heads) + " does not divide --d-model " + std::to_string(d_model) +
              "; fix: choose heads that divide d_model (e.g. " + std::to_string(d_model % 4 == 0 ? 4 : 1) +
              "), or give the head width with --head-dim");
  require(head_dim >= 0, "--head-dim must be positive (got " + std::to_string(head_dim) + "); fix: e.g. --head-dim 64");
  require(kv_heads >= 0 && (kv_heads == 0 || heads % kv_heads == 0),
          "--kv-heads " + std::to_string(kv_heads) + " does not divide --heads " + std::to_string(heads) +
              " (each key/value head serves h/K query heads); fix: e.g. --kv-heads " +
              std::to_string(heads % 2 == 0 ? heads / 2 : 1));
  if (rope) {
    require(rope_theta > 0 && std::isfinite(rope_theta), "--rope-theta must be a positive number; fix: e.g. 10000");
    require(rotary_fraction > 0 && rotary_fraction <= 1,
            "--rotary-fraction must lie in (0, 1]; fix: e.g. --rotary-fraction 0.25 (Pythia) or 1");
    const Index r = static_cast<Index>(rotary_fraction * static_cast<double>(hd()));
    char fraction[32];
    std::snprintf(fraction, sizeof fraction, "%g", rotary_fraction);
    require(r >= 2 && r % 2 == 0, "--rotary-fraction " + std::string(fraction) + " of head width " +
                                      std::to_string(hd()) + " rotates " + std::to_string(r) +
                                      " features, which must be even and at least 2; fix: choose a fraction f with "
                                      "f*head_dim even");
  }
  require(rope || (rope_theta == 10000 && rotary_fraction == 1.0),
          "--rope-theta and --rotary-fraction set the rotary positions, which are off; fix: add --rope");
  require(attn_softcap >= 0 && std::isfinite(attn_softcap),
          "--attn-softcap must be a positive number (or 0: none); fix: e.g. --attn-softcap 50 (Gemma-2)");
  require(attn_scale >= 0 && std::isfinite(attn_scale),
          "--attn-scale must be a positive number; fix: e.g. --attn-scale 256 (logits times 256^(-1/2))");
  require(d_ff >= 0, "--d-ff must be positive (got " + std::to_string(d_ff) + "); fix: omit it for 4·d_model");
  require(std::isfinite(residual_scale), "--residual-scale must be a finite number; fix: e.g. --residual-scale 1");
  require(norm_eps > 0, "norm eps must be positive");
  factors();  // --base-width/--base-depth given as the parametrization needs them
  require(!param.scales_depth() || residual_scale == 1.0,
          "--residual-scale with --parametrization " + to_string(param.kind) + ", whose branch multiplier (L/L0)^(-" +
              (param.kind == ParametrizationKind::CompleteP ? std::string("1") : std::string("1/2")) +
              ") is that factor already; fix: drop --residual-scale, or use --parametrization mup or sp");
  require(embed_scale > 0 && std::isfinite(embed_scale),
          "--embed-scale must be a positive number or sqrt-d; fix: e.g. --embed-scale sqrt-d (Gemma)");
  require(!qkv_bias || !bias, "--qkv-bias adds q, k, v biases to a model without biases, but every linear layer has "
                              "one; fix: add --bias off (Qwen2: only q, k, v have biases), or drop --qkv-bias");
  const bool qkv_norms = placement == "hybridnorm" || placement == "hybridnorm-star";
  require(qk_norm == QkNorm::None || !qkv_norms, "--qk-norm with --placement " + placement +
                                                     ", which already normalizes Q, K and V per head; fix: drop --qk-norm");
  require(head_dim == 0 || head_dim * heads == d_model || placement != "normformer",
          "--placement normformer's head gains act on d/h columns of the output; fix: drop --head-dim, or use heads "
          "that divide d_model");
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

QkNorm parse_qk_norm(const std::string& name) {
  if (name == "none") return QkNorm::None;
  if (name == "head") return QkNorm::Head;
  if (name == "proj") return QkNorm::Proj;
  throw Error("unknown --qk-norm '" + name + "'; fix: use none, head (per head: Qwen3) or proj (whole projection: OLMo-2)");
}

double ModelConfig::logit_scale() const {
  if (attn_scale <= 0 && param.scales_width()) return mup_logit_scale(hd(), factors().width_mult);  // --attn-scale wins
  return 1.0 / std::sqrt(attn_scale > 0 ? attn_scale : static_cast<double>(hd()));
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
  require(is_decimal_number(text), "--init-scale " + not_decimal(text) + "; fix: e.g. --init-scale 0.5 or --init-scale inv-sqrt-2L");
  require(end != text.c_str() && *end == '\0' && std::isfinite(v) && v > 0,
          "--init-scale '" + text + "' is not a positive number; fix: e.g. --init-scale 0.5 or --init-scale inv-sqrt-2L");
  return v;
}

}  // namespace gradflow
