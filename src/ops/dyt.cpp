// dyt.cpp — Dynamic Tanh (Zhu et al. 2025): y = γ ⊙ tanh(α·x) + β, α a learnable scalar (α0 = 0.5).
// Element-wise, so one token's Jacobian is diag(γ ⊙ α·(1 − tanh²(α·x))).
#include "gradflow/ops/dyt.hpp"

namespace gradflow::ops {

Mat dyt_forward(const Mat& x, double alpha, const Mat& gamma, const Mat& beta, NormCache& c) {
  c.x = x;
  c.xhat = (alpha * x.array()).tanh();
  Mat y = c.xhat.array().rowwise() * gamma.row(0).array();
  y.rowwise() += beta.row(0);
  return y;
}

Mat dyt_vjp(const NormCache& c, double alpha, const Mat& gamma, const Mat& dy, Mat* dalpha, Mat* dgamma, Mat* dbeta) {
  // in the forward pass this was: y = γ ⊙ t + β,  t = tanh(α·x)
  const Index n = c.xhat.rows();
  Mat dx(dy.rows(), dy.cols());
  for (Index r = 0; r < dy.rows(); ++r) {
    const Index i = r % n;
    const RowVec sech2 = 1.0 - c.xhat.row(i).array().square();
    const RowVec gdy = dy.row(r).cwiseProduct(gamma.row(0));
    dx.row(r) = alpha * gdy.cwiseProduct(sech2);
    if (dalpha) (*dalpha)(0, 0) += gdy.cwiseProduct(sech2).dot(c.x.row(i));
    if (dgamma) dgamma->row(0) += dy.row(r).cwiseProduct(c.xhat.row(i));
    if (dbeta) dbeta->row(0) += dy.row(r);
  }
  return dx;
}

Mat dyt_jvp(const NormCache& c, double alpha, const Mat& gamma, const Mat& dx) {
  const Index n = c.xhat.rows();
  Mat dy(dx.rows(), dx.cols());
  for (Index r = 0; r < dx.rows(); ++r) {
    const Index i = r % n;
    const RowVec sech2 = 1.0 - c.xhat.row(i).array().square();
    dy.row(r) = alpha * dx.row(r).cwiseProduct(sech2).cwiseProduct(gamma.row(0));
  }
  return dy;
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
