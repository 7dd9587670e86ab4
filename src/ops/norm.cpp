// norm.cpp — NormLayer: dispatch to layernorm / rmsnorm / dyt (see norm.hpp).
#include "gradflow/ops/norm.hpp"

#include "gradflow/core/error.hpp"
#include "gradflow/ops/dyt.hpp"
#include "gradflow/ops/layernorm.hpp"
#include "gradflow/ops/rmsnorm.hpp"

namespace gradflow {

NormKind parse_norm_kind(const std::string& name) {
  if (name == "layernorm") return NormKind::LayerNorm;
  if (name == "rmsnorm") return NormKind::RMSNorm;
  if (name == "dyt") return NormKind::DyT;
  throw Error("unknown norm '" + name + "'; fix: use --norm layernorm, rmsnorm or dyt");
}

std::string to_string(NormKind k) {
  switch (k) {
    case NormKind::LayerNorm: return "layernorm";
    case NormKind::RMSNorm: return "rmsnorm";
    case NormKind::DyT: return "dyt";
  }
  return "?";
}

Mat NormLayer::forward(const ParamStore& p, const Mat& x, NormCache& c) const {
  switch (kind) {
    case NormKind::LayerNorm: return ops::layernorm_forward(x, p[weight], p[bias], eps, c);
    case NormKind::RMSNorm: return ops::rmsnorm_forward(x, p[weight], eps, c);
    case NormKind::DyT: return ops::dyt_forward(x, p[alpha](0, 0), p[weight], p[bias], c);
  }
  return {};
}

Mat NormLayer::vjp(const ParamStore& p, const NormCache& c, const Mat& dy, ParamGrads* g) const {
  switch (kind) {
    case NormKind::LayerNorm:
      return ops::layernorm_vjp(c, p[weight], dy, g ? &(*g)[weight] : nullptr, g ? &(*g)[bias] : nullptr);
    case NormKind::RMSNorm: return ops::rmsnorm_vjp(c, p[weight], dy, g ? &(*g)[weight] : nullptr);
    case NormKind::DyT:
      return ops::dyt_vjp(c, p[alpha](0, 0), p[weight], dy, g ? &(*g)[alpha] : nullptr, g ? &(*g)[weight] : nullptr,
                          g ? &(*g)[bias] : nullptr);
  }
  return {};
}

Mat NormLayer::jvp(const ParamStore& p, const NormCache& c, const Mat& dx) const {
  switch (kind) {
    case NormKind::LayerNorm: return ops::layernorm_jvp(c, p[weight], dx);
    case NormKind::RMSNorm: return ops::rmsnorm_jvp(c, p[weight], dx);
    case NormKind::DyT: return ops::dyt_jvp(c, p[alpha](0, 0), p[weight], dx);
  }
  return {};
}

Mat NormLayer::jvp_with_params(const ParamStore& p, const NormCache& c, const Mat& dx, const ParamGrads& dtheta) const {
  // forward: y = γ ⊙ x̂ + β  (x̂ = tanh(α·x) for dyt)
  Mat dy = jvp(p, c, dx);
  dy += Mat(c.xhat.array().rowwise() * dtheta[weight].row(0).array());
  if (bias >= 0) dy.rowwise() += dtheta[bias].row(0);
  if (kind == NormKind::DyT) {
    const Mat sech2 = (1.0 - c.xhat.array().square()).matrix();
    dy += dtheta[alpha](0, 0) * Mat((sech2.cwiseProduct(c.x)).array().rowwise() * p[weight].row(0).array());
  }
  return dy;
}

Jacobian NormLayer::jacobian(const ParamStore& p, const NormCache& c) const {
  switch (kind) {
    case NormKind::LayerNorm: return ops::layernorm_jacobian(c, p[weight]);
    case NormKind::RMSNorm: return ops::rmsnorm_jacobian(c, p[weight]);
    case NormKind::DyT: return ops::dyt_jacobian(c, p[alpha](0, 0), p[weight]);
  }
  return {};
}

}  // namespace gradflow
