// parametrization.cpp — see parametrization.hpp; the table and its sources: docs/math.md §15.
#include "gradflow/model/parametrization.hpp"

#include <cmath>

#include "gradflow/core/error.hpp"

namespace gradflow {

ParametrizationKind parse_parametrization(const std::string& name) {
  if (name == "sp") return ParametrizationKind::Sp;
  if (name == "mup") return ParametrizationKind::Mup;
  if (name == "depth-mup") return ParametrizationKind::DepthMup;
  if (name == "completep") return ParametrizationKind::CompleteP;
  throw Error("unknown --parametrization '" + name + "'; fix: use sp, mup, depth-mup or completep");
}

double Parametrization::alpha() const {
  if (kind == ParametrizationKind::DepthMup) return 0.5;
  if (kind == ParametrizationKind::CompleteP) return 1.0;
  return 0.0;
}

ParametrizationFactors parametrization_factors(const Parametrization& p, Index d_model, Index layers) {
  ParametrizationFactors f;
  f.p = p;
  if (!p.scales_width()) {
    require(p.base_width == 0 && p.base_depth == 0,
            "--base-width and --base-depth belong to a parametrization; fix: add --parametrization mup (width), "
            "depth-mup or completep (width and depth), or drop them");
    return f;
  }
  const std::string name = to_string(p.kind);
  require(p.base_width > 0, "--parametrization " + name + " needs --base-width (the width its hyperparameters were "
                            "tuned at); fix: e.g. --base-width " + std::to_string(d_model));
  require(p.scales_depth() ? p.base_depth > 0 : p.base_depth == 0,
          p.scales_depth() ? "--parametrization " + name + " needs --base-depth (the depth its hyperparameters were "
                             "tuned at); fix: e.g. --base-depth " + std::to_string(layers)
                           : "--parametrization mup scales width only; fix: drop --base-depth, or use depth-mup or "
                             "completep to scale depth too");
  f.width_mult = static_cast<double>(d_model) / static_cast<double>(p.base_width);
  f.readout = 1.0 / f.width_mult;
  if (p.scales_depth()) {
    f.depth_mult = static_cast<double>(layers) / static_cast<double>(p.base_depth);
    f.branch = std::pow(f.depth_mult, -p.alpha());
  }
  return f;
}

double ParametrizationFactors::lr(ParamRole role, bool in_block) const {
  if (!p.scales_width() || !in_block) return 1.0;  // embeddings, readout, final norm: the base rate (Table 1)
  const double depth = p.scales_depth() ? std::pow(depth_mult, p.alpha() - 1.0) : 1.0;
  return is_weight_matrix(role) ? depth / width_mult : depth;
}

double ParametrizationFactors::eps(bool in_block) const {
  if (!p.scales_depth() || !in_block) return 1.0;  // μP alone leaves ε (microsoft/mup's MuAdam)
  return std::pow(depth_mult, -p.alpha()) / width_mult;
}

double ParametrizationFactors::weight_decay(ParamRole role) const {
  return p.scales_width() && is_weight_matrix(role) ? width_mult : 1.0;
}

double ParametrizationFactors::init(ParamRole role, const std::string& scheme) const {
  if (!p.scales_width()) return 1.0;
  // a fixed standard deviation (gpt2, hf-normal) is the base width's: μP's hidden weights shrink it by m_N^(-1/2)
  if (is_weight_matrix(role)) return scheme == "gpt2" || scheme == "hf-normal" ? 1.0 / std::sqrt(width_mult) : 1.0;
  const bool bias = role == ParamRole::InProjBias || role == ParamRole::OutProjBias || role == ParamRole::Linear1Bias ||
                    role == ParamRole::Linear2Bias || role == ParamRole::Linear3Bias;
  const bool fan_in_bias = scheme == "torch" || scheme == "xavier";  // the others start biases at 0
  return bias && fan_in_bias ? std::sqrt(width_mult) : 1.0;
}

double ParametrizationFactors::readout_init() const { return p.scales_width() ? std::sqrt(width_mult) : 1.0; }

double mup_logit_scale(Index head_dim, double width_mult) {
  // √e0/e = 1/√(e·m_N), written so that the base width gives sp's 1/√e as the very same double
  return 1.0 / std::sqrt(static_cast<double>(head_dim) * width_mult);
}

}  // namespace gradflow
