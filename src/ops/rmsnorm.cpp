// rmsnorm.cpp — RMSNorm (Zhang & Sennrich 2019) and its exact derivatives.
// With xhat = x·r, r = 1/sqrt(mean(x²) + ε), one token's Jacobian is r · diag(γ) · (I − xhat xhatᵀ/d).
#include "gradflow/ops/rmsnorm.hpp"

#include "scaled_moments.hpp"

namespace gradflow::ops {

Mat rmsnorm_forward(const Mat& x, const Mat& gamma, double eps, NormCache& c) {
  const Index n = x.rows(), d = x.cols();
  c.xhat.resize(n, d);
  c.rstd.resize(n);
  // the moment is taken of the row itself
  const auto itself = [](const auto& row) -> const auto& { return row; };
  for (Index i = 0; i < n; ++i) detail::normalize_row(x.row(i), eps, itself, c.rstd(i), c.xhat.row(i));
  return c.xhat.array().rowwise() * gamma.row(0).array();
}

Mat rmsnorm_vjp(const NormCache& c, const Mat& gamma, const Mat& dy, Mat* dgamma) {
  // in the forward pass this was: y = γ ⊙ xhat,  xhat = x·r
  const Index n = c.xhat.rows(), d = c.xhat.cols();
  Mat dx(dy.rows(), d);
  for (Index r = 0; r < dy.rows(); ++r) {
    const Index i = r % n;
    const RowVec g = dy.row(r).cwiseProduct(gamma.row(0));
    const double proj = g.dot(c.xhat.row(i)) / static_cast<double>(d);
    dx.row(r) = c.rstd(i) * (g - c.xhat.row(i) * proj);
    if (dgamma) dgamma->row(0) += dy.row(r).cwiseProduct(c.xhat.row(i));
  }
  return dx;
}

Mat rmsnorm_jvp(const NormCache& c, const Mat& gamma, const Mat& dx) {
  // in the forward pass this was: y = γ ⊙ xhat,  xhat = x·r
  const Index n = c.xhat.rows(), d = c.xhat.cols();
  Mat dy(dx.rows(), d);
  for (Index r = 0; r < dx.rows(); ++r) {
    const Index i = r % n;
    const double proj = c.xhat.row(i).dot(dx.row(r)) / static_cast<double>(d);
    dy.row(r) = (c.rstd(i) * (dx.row(r) - c.xhat.row(i) * proj)).cwiseProduct(gamma.row(0));
  }
  return dy;
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
