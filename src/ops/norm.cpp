// norm.cpp — NormLayer: dispatch to layernorm / rmsnorm / dyt (see norm.hpp).
#include "gradflow/ops/norm.hpp"

#include "gradflow/core/error.hpp"
#include "gradflow/kernels/row_math.hpp"
#include "gradflow/ops/dyt.hpp"
#include "gradflow/ops/elementwise.hpp"
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

Mat NormLayer::gamma(const ParamStore& p) const {
  if (!unit_offset) return p[weight];
  return (p[weight].array() + 1.0).matrix();
}

Mat NormLayer::forward(const ParamStore& p, const Mat& x, NormCache& c) const {
  switch (kind) {
    case NormKind::LayerNorm: return ops::layernorm_forward(x, gamma(p), p[bias], eps, c, *kernels);
    case NormKind::RMSNorm: return ops::rmsnorm_forward(x, gamma(p), eps, c, *kernels);
    case NormKind::DyT: return ops::dyt_forward(x, p[alpha](0, 0), gamma(p), p[bias], c, *kernels);
  }
  return {};
}

Mat NormLayer::vjp(const ParamStore& p, const NormCache& c, const Mat& dy, ParamGrads* g) const {
  Mat dx;
  switch (kind) {
    case NormKind::LayerNorm:
      dx = ops::layernorm_vjp(c, gamma(p), dy, g ? &(*g)[weight] : nullptr, g ? &(*g)[bias] : nullptr, *kernels);
      break;
    case NormKind::RMSNorm: dx = ops::rmsnorm_vjp(c, gamma(p), dy, g ? &(*g)[weight] : nullptr, *kernels); break;
    case NormKind::DyT:
      dx = ops::dyt_vjp(c, p[alpha](0, 0), gamma(p), dy, g ? &(*g)[alpha] : nullptr, g ? &(*g)[weight] : nullptr,
                        g ? &(*g)[bias] : nullptr, *kernels);
      break;
  }
  if (input_kernels) ops::cast_to(*input_kernels, dx);  // computed in float32 (kernels), cast to its input's type
  return dx;
}

Mat NormLayer::jvp(const ParamStore& p, const NormCache& c, const Mat& dx) const {
  switch (kind) {
    case NormKind::LayerNorm: return ops::layernorm_jvp(c, gamma(p), dx, *kernels);
    case NormKind::RMSNorm: return ops::rmsnorm_jvp(c, gamma(p), dx, *kernels);
    case NormKind::DyT: return ops::dyt_jvp(c, p[alpha](0, 0), gamma(p), dx, *kernels);
  }
  return {};
}

Mat NormLayer::jvp_with_params(const ParamStore& p, const NormCache& c, const Mat& dx, const ParamGrads& dtheta) const {
  // forward: y = γ ⊙ x̂ + β  (x̂ = tanh(α·x) for dyt)
  const KernelOps& k = *kernels;
  const Index n = c.xhat.rows(), d = c.xhat.cols();
  Mat dy = jvp(p, c, dx);
  Mat t(n, d);
  k.scale_columns(c.xhat.data(), dtheta[weight].data(), t.data(), n, d);  // x̂ ⊙ dγ
  k.axpby(t.size(), 1.0, t.data(), 1.0, dy.data());
  if (bias >= 0) k.add_row(dy.data(), dtheta[bias].data(), n, d);
  if (kind == NormKind::DyT) {
    // ∂y/∂α = γ ⊙ (1 − x̂²) ⊙ x: DyT's own JVP at α = 1 applied to x
    const Mat gm = gamma(p);
    k.norm_jvp(rows::kDyT, c.xhat.data(), nullptr, gm.data(), 1.0, n, d, c.x.data(), t.data(), n);
    k.axpby(t.size(), dtheta[alpha](0, 0), t.data(), 1.0, dy.data());
  }
  return dy;
}

Jacobian NormLayer::jacobian(const ParamStore& p, const NormCache& c) const {
  switch (kind) {
    case NormKind::LayerNorm: return ops::layernorm_jacobian(c, gamma(p));
    case NormKind::RMSNorm: return ops::rmsnorm_jacobian(c, gamma(p));
    case NormKind::DyT: return ops::dyt_jacobian(c, p[alpha](0, 0), gamma(p));
  }
  return {};
}

}  // namespace gradflow
