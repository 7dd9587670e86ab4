// layernorm.cpp — LayerNorm over the last dimension and its exact derivatives.
// With xhat = (x − μ)·r, r = 1/sqrt(σ² + ε), one token's Jacobian is
//   dy/dx = r · diag(γ) · (I − 1 1ᵀ/d − xhat xhatᵀ/d)
// (docs/math.md derives it; it equals REFERENCES' (√d/‖y‖)(I − y yᵀ/‖y‖²)(I − 1 1ᵀ/d) when ε = 0).
#include "gradflow/ops/layernorm.hpp"

#include "gradflow/kernels/row_math.hpp"
#include "norm_passes.hpp"

namespace gradflow::ops {

Mat layernorm_forward(const Mat& x, const Mat& gamma, const Mat& beta, double eps, NormCache& c, const KernelOps& k) {
  return detail::norm_forward(rows::kLayerNorm, x, gamma, &beta, eps, 0.0, c, k);
}

Mat layernorm_vjp(const NormCache& c, const Mat& gamma, const Mat& dy, Mat* dgamma, Mat* dbeta, const KernelOps& k) {
  return detail::norm_vjp(rows::kLayerNorm, c, gamma, 0.0, dy, dgamma, dbeta, nullptr, k);
}

Mat layernorm_jvp(const NormCache& c, const Mat& gamma, const Mat& dx, const KernelOps& k) {
  return detail::norm_jvp(rows::kLayerNorm, c, gamma, 0.0, dx, k);
}

Jacobian layernorm_jacobian(const NormCache& c, const Mat& gamma) {
  const Index n = c.xhat.rows(), d = c.xhat.cols();
  std::vector<Mat> blocks(static_cast<size_t>(n));
  for (Index i = 0; i < n; ++i) {
    // r · diag(γ) · (I − 1 1ᵀ/d − xhat xhatᵀ/d)
    Mat m = Mat::Identity(d, d);
    m.array() -= 1.0 / static_cast<double>(d);
    m.noalias() -= c.xhat.row(i).transpose() * c.xhat.row(i) / static_cast<double>(d);
    m = (c.rstd(i) * gamma.row(0).transpose()).asDiagonal() * m;
    blocks[static_cast<size_t>(i)] = std::move(m);
  }
  return Jacobian::tokenwise(std::move(blocks));
}

}  // namespace gradflow::ops
