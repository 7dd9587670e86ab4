// dyt.cpp — Dynamic Tanh (Zhu et al. 2025): y = γ ⊙ tanh(α·x) + β, α a learnable scalar (α0 = 0.5).
// Element-wise, so one token's Jacobian is diag(γ ⊙ α·(1 − tanh²(α·x))).
#include "gradflow/ops/dyt.hpp"

#include "gradflow/kernels/row_math.hpp"
#include "norm_passes.hpp"

namespace gradflow::ops {

Mat dyt_forward(const Mat& x, double alpha, const Mat& gamma, const Mat& beta, NormCache& c, const KernelOps& k) {
  return detail::norm_forward(rows::kDyT, x, gamma, &beta, 0.0, alpha, c, k);
}

Mat dyt_vjp(const NormCache& c, double alpha, const Mat& gamma, const Mat& dy, Mat* dalpha, Mat* dgamma, Mat* dbeta,
            const KernelOps& k) {
  // in the forward pass this was: y = γ ⊙ t + β,  t = tanh(α·x)
  return detail::norm_vjp(rows::kDyT, c, gamma, alpha, dy, dgamma, dbeta, dalpha, k);
}

Mat dyt_jvp(const NormCache& c, double alpha, const Mat& gamma, const Mat& dx, const KernelOps& k) {
  return detail::norm_jvp(rows::kDyT, c, gamma, alpha, dx, k);
}

Jacobian dyt_jacobian(const NormCache& c, double alpha, const Mat& gamma) {
  const Index n = c.xhat.rows();
  std::vector<Mat> blocks(static_cast<size_t>(n));
  for (Index i = 0; i < n; ++i) {
    const RowVec diag = alpha * (1.0 - c.xhat.row(i).array().square()).matrix().cwiseProduct(gamma.row(0));
    blocks[static_cast<size_t>(i)] = diag.asDiagonal();
  }
  return Jacobian::tokenwise(std::move(blocks));
}

}  // namespace gradflow::ops
