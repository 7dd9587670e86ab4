// rmsnorm.cpp — RMSNorm (Zhang & Sennrich 2019) and its exact derivatives.
// With xhat = x·r, r = 1/sqrt(mean(x²) + ε), one token's Jacobian is r · diag(γ) · (I − xhat xhatᵀ/d).
#include "gradflow/ops/rmsnorm.hpp"

#include "gradflow/kernels/row_math.hpp"
#include "norm_passes.hpp"

namespace gradflow::ops {

Mat rmsnorm_forward(const Mat& x, const Mat& gamma, double eps, NormCache& c, const KernelOps& k) {
  return detail::norm_forward(rows::kRMSNorm, x, gamma, nullptr, eps, 0.0, c, k);
}

Mat rmsnorm_vjp(const NormCache& c, const Mat& gamma, const Mat& dy, Mat* dgamma, const KernelOps& k) {
  return detail::norm_vjp(rows::kRMSNorm, c, gamma, 0.0, dy, dgamma, nullptr, nullptr, k);
}

Mat rmsnorm_jvp(const NormCache& c, const Mat& gamma, const Mat& dx, const KernelOps& k) {
  return detail::norm_jvp(rows::kRMSNorm, c, gamma, 0.0, dx, k);
}

Jacobian rmsnorm_jacobian(const NormCache& c, const Mat& gamma) {
  const Index n = c.xhat.rows(), d = c.xhat.cols();
  std::vector<Mat> blocks(static_cast<size_t>(n));
  for (Index i = 0; i < n; ++i) {
    Mat m = Mat::Identity(d, d);
    m.noalias() -= c.xhat.row(i).transpose() * c.xhat.row(i) / static_cast<double>(d);
    blocks[static_cast<size_t>(i)] = (c.rstd(i) * gamma.row(0).transpose()).asDiagonal() * m;
  }
  return Jacobian::tokenwise(std::move(blocks));
}

}  // namespace gradflow::ops
