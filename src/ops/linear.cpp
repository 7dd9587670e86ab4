// linear.cpp — y = x Wᵀ + b and its derivatives (see linear.hpp).
#include "gradflow/ops/linear.hpp"

namespace gradflow::ops {

Mat linear_forward(const Mat& x, const Mat& W, const Mat* b) {
  Mat y(x.rows(), W.rows());
  y.noalias() = x * W.transpose();
  if (b) y.rowwise() += b->row(0);
  return y;
}

Mat linear_vjp(const Mat& x, const Mat& W, const Mat& dy, Mat* dW, Mat* db) {
  // in the forward pass this was: y = x Wᵀ + b
  if (dW) dW->noalias() += dy.transpose() * x;
  if (db) *db += dy.colwise().sum();
  Mat dx(dy.rows(), W.cols());
  dx.noalias() = dy * W;
  return dx;
}

Mat linear_jvp(const Mat& W, const Mat& dx) {
  Mat dy(dx.rows(), W.rows());
  dy.noalias() = dx * W.transpose();
  return dy;
}

Mat linear_param_jvp(const Mat& x, const Mat* dW, const Mat* db, Index out) {
  Mat dy = dW ? Mat(x * dW->transpose()) : Mat::Zero(x.rows(), out);
  if (db) dy.rowwise() += db->row(0);
  return dy;
}

Jacobian linear_jacobian(const Mat& W, Index n_tokens) {
  return Jacobian::tokenwise(std::vector<Mat>(static_cast<size_t>(n_tokens), W));
}

}  // namespace gradflow::ops
