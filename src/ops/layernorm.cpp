// layernorm.cpp — LayerNorm over the last dimension and its exact derivatives.
// With xhat = (x − μ)·r, r = 1/sqrt(σ² + ε), one token's Jacobian is
//   dy/dx = r · diag(γ) · (I − 1 1ᵀ/d − xhat xhatᵀ/d)
// (docs/math.md derives it; it equals REFERENCES' (√d/‖y‖)(I − y yᵀ/‖y‖²)(I − 1 1ᵀ/d) when ε = 0).
#include "gradflow/ops/layernorm.hpp"

#include "scaled_moments.hpp"

namespace gradflow::ops {

Mat layernorm_forward(const Mat& x, const Mat& gamma, const Mat& beta, double eps, NormCache& c) {
  const Index n = x.rows(), d = x.cols();
  c.xhat.resize(n, d);
  c.rstd.resize(n);
  // the moment is taken of the centred row, x − μ
  const auto centred = [](const auto& row) { return RowVec(row.array() - row.mean()); };
  for (Index i = 0; i < n; ++i) detail::normalize_row(x.row(i), eps, centred, c.rstd(i), c.xhat.row(i));
  Mat y = c.xhat.array().rowwise() * gamma.row(0).array();
  y.rowwise() += beta.row(0);
  return y;
}

Mat layernorm_vjp(const NormCache& c, const Mat& gamma, const Mat& dy, Mat* dgamma, Mat* dbeta) {
  // in the forward pass this was: y = γ ⊙ xhat + β,  xhat = (x − μ)·r
  const Index n = c.xhat.rows(), d = c.xhat.cols();
  Mat dx(dy.rows(), d);
  for (Index r = 0; r < dy.rows(); ++r) {
    const Index i = r % n;
    const RowVec g = dy.row(r).cwiseProduct(gamma.row(0));
    const double mean_g = g.mean();
    const double mean_gx = g.dot(c.xhat.row(i)) / static_cast<double>(d);
    dx.row(r) = c.rstd(i) * (g.array() - mean_g - c.xhat.row(i).array() * mean_gx);
    if (dgamma) dgamma->row(0) += dy.row(r).cwiseProduct(c.xhat.row(i));
    if (dbeta) dbeta->row(0) += dy.row(r);
  }
  return dx;
}

Mat layernorm_jvp(const NormCache& c, const Mat& gamma, const Mat& dx) {
  // in the forward pass this was: y = γ ⊙ xhat + β,  xhat = (x − μ)·r
  const Index n = c.xhat.rows(), d = c.xhat.cols();
  Mat dy(dx.rows(), d);
  for (Index r = 0; r < dx.rows(); ++r) {
    const Index i = r % n;
    const RowVec dxc = dx.row(r).array() - dx.row(r).mean();
    const double proj = c.xhat.row(i).dot(dxc) / static_cast<double>(d);
    dy.row(r) = (c.rstd(i) * (dxc - c.xhat.row(i) * proj)).cwiseProduct(gamma.row(0));
  }
  return dy;
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
