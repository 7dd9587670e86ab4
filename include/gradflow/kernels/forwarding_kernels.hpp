// forwarding_kernels.hpp — a KernelOps that hands every call to another one: the base of kernels that change a few
// operations and keep the rest (a test's deliberately wrong GEMM; an emulated precision that rounds some outputs).
#pragma once
#include "gradflow/kernels/kernel_ops.hpp"

namespace gradflow {

class ForwardingKernelOps : public KernelOps {
 public:
  explicit ForwardingKernelOps(const KernelOps& inner) : inner_(inner) {}
  const KernelOps& inner() const { return inner_; }

  std::unique_ptr<KernelArray> alloc(Index count, const std::string& what) const override {
    return inner_.alloc(count, what);
  }
  void upload(const double* host, double* dst, Index count) const override { inner_.upload(host, dst, count); }
  void download(const double* src, double* host, Index count) const override { inner_.download(src, host, count); }
  void gemm(Index m, Index n, Index k, double alpha, const GemmOperand& A, const GemmOperand& B, double beta,
            double* c, Index ldc, Index c_stride, Index batch) const override {
    inner_.gemm(m, n, k, alpha, A, B, beta, c, ldc, c_stride, batch);
  }
  void norm_vjp(int kind, const double* xhat, const double* rstd, const double* gamma, double alpha, Index n, Index d,
                const double* dy, double* dx, Index rows) const override {
    inner_.norm_vjp(kind, xhat, rstd, gamma, alpha, n, d, dy, dx, rows);
  }
  void norm_jvp(int kind, const double* xhat, const double* rstd, const double* gamma, double alpha, Index n, Index d,
                const double* dx, double* dy, Index rows) const override {
    inner_.norm_jvp(kind, xhat, rstd, gamma, alpha, n, d, dx, dy, rows);
  }
  void softmax_vjp(const double* P, Index n, double* dp, Index copies, double scale) const override {
    inner_.softmax_vjp(P, n, dp, copies, scale);
  }
  void multiply_tiled(double* x, const double* f, Index n, Index cols, Index rows) const override {
    inner_.multiply_tiled(x, f, n, cols, rows);
  }
  void axpby(Index count, double a, const double* x, double b, double* y) const override {
    inner_.axpby(count, a, x, b, y);
  }
  void scale_columns(const double* x, const double* s, double* y, Index rows, Index cols) const override {
    inner_.scale_columns(x, s, y, rows, cols);
  }
  void copy_2d(const double* src, Index ld_src, double* dst, Index ld_dst, Index rows, Index cols) const override {
    inner_.copy_2d(src, ld_src, dst, ld_dst, rows, cols);
  }
  void identity_rows(double* u, Index start, Index k, Index n, Index w) const override {
    inner_.identity_rows(u, start, k, n, w);
  }
  double max_abs(const double* x, Index count) const override { return inner_.max_abs(x, count); }
  double sum_squares(const double* x, Index count) const override { return inner_.sum_squares(x, count); }
  void add_row(double* y, const double* b, Index rows, Index cols) const override { inner_.add_row(y, b, rows, cols); }
  void gemm_add_row(Index m, Index n, Index k, const GemmOperand& A, const GemmOperand& B, const double* b,
                    double* c) const override {
    inner_.gemm_add_row(m, n, k, A, B, b, c);
  }
  void add_column_sums(const double* x, Index rows, Index cols, double* acc) const override {
    inner_.add_column_sums(x, rows, cols, acc);
  }
  double dot(const double* x, const double* y, Index count) const override { return inner_.dot(x, y, count); }
  void norm_forward(int kind, const double* x, Index rows, Index d, double eps, double alpha, double* xhat,
                    double* rstd) const override {
    inner_.norm_forward(kind, x, rows, d, eps, alpha, xhat, rstd);
  }
  void norm_param_vjp(int kind, const double* xhat, const double* x, const double* gamma, Index n, Index d,
                      const double* dy, Index rows, double* dgamma, double* dbeta, double* dalpha) const override {
    inner_.norm_param_vjp(kind, xhat, x, gamma, n, d, dy, rows, dgamma, dbeta, dalpha);
  }
  void softmax_rows(double* s, Index rows, Index cols, bool causal) const override {
    inner_.softmax_rows(s, rows, cols, causal);
  }
  void activation(int kind, const double* z, Index count, double* a, double* fprime) const override {
    inner_.activation(kind, z, count, a, fprime);
  }

 private:
  const KernelOps& inner_;
};

}  // namespace gradflow
