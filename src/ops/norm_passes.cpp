// norm_passes.cpp — see norm_passes.hpp.
#include "norm_passes.hpp"

#include "gradflow/kernels/row_math.hpp"

namespace gradflow::ops::detail {

Mat norm_forward(int kind, const Mat& x, const Mat& gamma, const Mat* beta, double eps, double alpha, NormCache& c,
                 const KernelOps& k) {
  const Index n = x.rows(), d = x.cols();
  c.xhat.resize(n, d);
  if (kind == rows::kDyT) c.x = x;
  else c.rstd.resize(n);
  k.norm_forward(kind, x.data(), n, d, eps, alpha, c.xhat.data(), kind == rows::kDyT ? nullptr : c.rstd.data());
  Mat y(n, d);
  k.scale_columns(c.xhat.data(), gamma.data(), y.data(), n, d);
  if (beta) k.add_row(y.data(), beta->data(), n, d);
  return y;
}

Mat norm_vjp(int kind, const NormCache& c, const Mat& gamma, double alpha, const Mat& dy, Mat* dgamma, Mat* dbeta,
             Mat* dalpha, const KernelOps& k) {
  // in the forward pass this was: y = γ ⊙ x̂ + β
  const Index n = c.xhat.rows(), d = c.xhat.cols();
  Mat dx(dy.rows(), d);
  k.norm_vjp(kind, c.xhat.data(), kind == rows::kDyT ? nullptr : c.rstd.data(), gamma.data(), alpha, n, d, dy.data(),
             dx.data(), dy.rows());
  if (dgamma || dbeta || dalpha)
    k.norm_param_vjp(kind, c.xhat.data(), kind == rows::kDyT ? c.x.data() : nullptr, gamma.data(), n, d, dy.data(),
                     dy.rows(), dgamma ? dgamma->data() : nullptr, dbeta ? dbeta->data() : nullptr,
                     dalpha ? dalpha->data() : nullptr);
  return dx;
}

Mat norm_jvp(int kind, const NormCache& c, const Mat& gamma, double alpha, const Mat& dx, const KernelOps& k) {
  const Index n = c.xhat.rows(), d = c.xhat.cols();
  Mat dy(dx.rows(), d);
  k.norm_jvp(kind, c.xhat.data(), kind == rows::kDyT ? nullptr : c.rstd.data(), gamma.data(), alpha, n, d, dx.data(),
             dy.data(), dx.rows());
  return dy;
}

}  // namespace gradflow::ops::detail
