// linear.cpp — y = x Wᵀ + b and its derivatives (see linear.hpp), through the kernels `k`.
#include "gradflow/ops/linear.hpp"

namespace gradflow::ops {
namespace {
GemmOperand plain(const Mat& m) { return {m.data(), m.cols()}; }
GemmOperand transposed(const Mat& m) { return {m.data(), m.cols(), 0, true}; }
}  // namespace

Mat linear_forward(const Mat& x, const Mat& W, const Mat* b, const KernelOps& k) {
  Mat y(x.rows(), W.rows());
  if (b) k.gemm_add_row(x.rows(), W.rows(), W.cols(), plain(x), transposed(W), b->data(), y.data());
  else k.gemm(x.rows(), W.rows(), W.cols(), 1.0, plain(x), transposed(W), 0.0, y.data(), y.cols(), 0, 1);
  return y;
}

Mat linear_vjp(const Mat& x, const Mat& W, const Mat& dy, Mat* dW, Mat* db, const KernelOps& k) {
  // in the forward pass this was: y = x Wᵀ + b
  if (dW) k.gemm(dy.cols(), x.cols(), dy.rows(), 1.0, transposed(dy), plain(x), 1.0, dW->data(), dW->cols(), 0, 1);
  if (db) k.add_column_sums(dy.data(), dy.rows(), dy.cols(), db->data());
  Mat dx(dy.rows(), W.cols());
  k.gemm(dy.rows(), W.cols(), W.rows(), 1.0, plain(dy), plain(W), 0.0, dx.data(), dx.cols(), 0, 1);
  return dx;
}

Mat linear_jvp(const Mat& W, const Mat& dx, const KernelOps& k) { return linear_forward(dx, W, nullptr, k); }

Mat linear_param_jvp(const Mat& x, const Mat* dW, const Mat* db, Index out, const KernelOps& k) {
  Mat dy = dW ? linear_forward(x, *dW, nullptr, k) : Mat::Zero(x.rows(), out);
  if (db) k.add_row(dy.data(), db->data(), dy.rows(), dy.cols());
  return dy;
}

Jacobian linear_jacobian(const Mat& W, Index n_tokens) {
  return Jacobian::tokenwise(std::vector<Mat>(static_cast<size_t>(n_tokens), W));
}

}  // namespace gradflow::ops
