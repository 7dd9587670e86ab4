// precision_kernels.cpp — see precision_kernels.hpp: a ForwardingKernelOps whose outputs are rounded.
#include "gradflow/kernels/precision_kernels.hpp"

#include <vector>

#include "gradflow/core/error.hpp"
#include "gradflow/kernels/forwarding_kernels.hpp"

namespace gradflow {
namespace {

using MatF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapF = Eigen::Map<MatF>;

// What a set of kernels rounds to: `gemm` the products' operands and outputs; `store` every other value it writes;
// `fp32_ops` the outputs of softmax (CUDA autocast's float32 list; the cast regime: the type itself)
struct RoundingTypes {
  Precision gemm, store, fp32_ops;
};

class PrecisionKernelOps final : public ForwardingKernelOps {
 public:
  PrecisionKernelOps(RoundingTypes t, const KernelOps& inner)
      : ForwardingKernelOps(inner), p_(t.store), gemm_(t.gemm), fp32_ops_(t.fp32_ops) {}

  // C_b = alpha·op(A_b)·op(B_b) + beta·C_b in float32 from operands rounded to the type, C rounded once
  void gemm(Index m, Index n, Index k, double alpha, const GemmOperand& A, const GemmOperand& B, double beta,
            double* c, Index ldc, Index c_stride, Index batch) const override {
    for (Index i = 0; i < batch; ++i) {
      double* ci = c + i * c_stride;
      product(m, n, k, alpha, A, B, i, [&](MapF& cf) {
        if (beta == 0.0) {
          cf.setZero();
          return;
        }
        for (Index r = 0; r < m; ++r)
          for (Index j = 0; j < n; ++j) cf(r, j) = static_cast<float>(beta) * to_float(ci[r * ldc + j]);
      }, ci, ldc);
    }
  }
  // C = op(A)·op(B) + b (b rounded to the type, as the linear casts it) in float32, rounded once
  void gemm_add_row(Index m, Index n, Index k, const GemmOperand& A, const GemmOperand& B, const double* b,
                    double* c) const override {
    product(m, n, k, 1.0, A, B, 0, [&](MapF& cf) {
      for (Index r = 0; r < m; ++r)
        for (Index j = 0; j < n; ++j) cf(r, j) = to_float(b[j]);
    }, c, n);
  }
  void norm_vjp(int kind, const double* xhat, const double* rstd, const double* gamma, double alpha, Index n, Index d,
                const double* dy, double* dx, Index rows) const override {
    inner().norm_vjp(kind, xhat, rstd, gamma, alpha, n, d, dy, dx, rows);
    round_in_place(p_, dx, rows * d);
  }
  void norm_jvp(int kind, const double* xhat, const double* rstd, const double* gamma, double alpha, Index n, Index d,
                const double* dx, double* dy, Index rows) const override {
    inner().norm_jvp(kind, xhat, rstd, gamma, alpha, n, d, dx, dy, rows);
    round_in_place(p_, dy, rows * d);
  }
  void softmax_vjp(const double* P, Index n, double* dp, Index copies, double scale) const override {
    inner().softmax_vjp(P, n, dp, copies, scale);
    round_in_place(p_, dp, copies * n * n);
  }
  void multiply_tiled(double* x, const double* f, Index n, Index cols, Index rows) const override {
    inner().multiply_tiled(x, f, n, cols, rows);
    round_in_place(p_, x, rows * cols);
  }
  void axpby(Index count, double a, const double* x, double b, double* y) const override {
    inner().axpby(count, a, x, b, y);
    round_in_place(p_, y, count);
  }
  void scale_columns(const double* x, const double* s, double* y, Index rows, Index cols) const override {
    inner().scale_columns(x, s, y, rows, cols);
    round_in_place(p_, y, rows * cols);
  }
  // b rounded to the type first (autocast casts a float32 bias with its linear; a cast model's is already rounded)
  void add_row(double* y, const double* b, Index rows, Index cols) const override {
    thread_local std::vector<double> rb;
    rb.assign(b, b + cols);
    round_in_place(p_, rb.data(), cols);
    inner().add_row(y, rb.data(), rows, cols);
    round_in_place(p_, y, rows * cols);
  }
  void add_column_sums(const double* x, Index rows, Index cols, double* acc) const override {
    inner().add_column_sums(x, rows, cols, acc);
    round_in_place(p_, acc, cols);
  }
  double dot(const double* x, const double* y, Index count) const override {
    return round_to(p_, inner().dot(x, y, count));
  }
  // the statistics in float32 (what a fused norm keeps); γ and β are applied by the kernels after it, rounded
  void norm_forward(int kind, const double* x, Index rows, Index d, double eps, double alpha, double* xhat,
                    double* rstd) const override {
    inner().norm_forward(kind, x, rows, d, eps, alpha, xhat, rstd);
    round_in_place(Precision::F32, xhat, rows * d);
    if (rstd) round_in_place(Precision::F32, rstd, rows);
  }
  void norm_param_vjp(int kind, const double* xhat, const double* x, const double* gamma, Index n, Index d,
                      const double* dy, Index rows, double* dgamma, double* dbeta, double* dalpha) const override {
    inner().norm_param_vjp(kind, xhat, x, gamma, n, d, dy, rows, dgamma, dbeta, dalpha);
    if (dgamma) round_in_place(p_, dgamma, d);
    if (dbeta) round_in_place(p_, dbeta, d);
    if (dalpha) *dalpha = round_to(p_, *dalpha);
  }
  void softmax_rows(double* s, Index rows, Index cols, bool causal) const override {
    inner().softmax_rows(s, rows, cols, causal);
    round_in_place(fp32_ops_, s, rows * cols);
  }
  // f(z) stored in the type; f'(z) in float32 (the fused backward multiplies by it and rounds once)
  void activation(int kind, const double* z, Index count, double* a, double* fprime) const override {
    inner().activation(kind, z, count, a, fprime);
    if (a) round_in_place(p_, a, count);
    if (fprime) round_in_place(Precision::F32, fprime, count);
  }

 private:
  float to_float(double x) const { return static_cast<float>(round_to(gemm_, x)); }
  // Problem i: C = start (fills the float32 accumulator) + alpha·op(A_i)·op(B_i), summed in float32 from operands
  // rounded to the type, then rounded once into c (leading dimension ldc)
  template <class Start>
  void product(Index m, Index n, Index k, double alpha, const GemmOperand& A, const GemmOperand& B, Index i,
               Start start, double* c, Index ldc) const {
    // buffers kept between calls (per thread, grown, never shrunk): a pass makes thousands of these products, and
    // fresh large buffers would each be zeroed by the kernel page by page
    thread_local std::vector<float> abuf, bbuf, cbuf;
    const Index ar = A.transposed ? k : m, ac = A.transposed ? m : k, br = B.transposed ? n : k,
                bc = B.transposed ? k : n;
    grow(abuf, ar * ac);
    grow(bbuf, br * bc);
    grow(cbuf, m * n);
    MapF a(abuf.data(), ar, ac), b(bbuf.data(), br, bc), cf(cbuf.data(), m, n);
    const float al = static_cast<float>(alpha);
    load(A, i, a);
    load(B, i, b);
    start(cf);
    if (A.transposed && B.transposed) cf.noalias() += al * a.transpose() * b.transpose();
    else if (A.transposed) cf.noalias() += al * a.transpose() * b;
    else if (B.transposed) cf.noalias() += al * a * b.transpose();
    else cf.noalias() += al * a * b;
    for (Index r = 0; r < m; ++r)
      for (Index j = 0; j < n; ++j) c[r * ldc + j] = round_to(gemm_, static_cast<double>(cf(r, j)));
  }
  static void grow(std::vector<float>& v, Index size) {
    if (v.size() < static_cast<size_t>(size)) v.resize(static_cast<size_t>(size));
  }
  // problem i's operand (out's shape) as a dense float32 matrix of values of the type
  void load(const GemmOperand& X, Index i, MapF& out) const {
    const double* base = X.data + i * X.stride;
    for (Index r = 0; r < out.rows(); ++r)
      for (Index j = 0; j < out.cols(); ++j) out(r, j) = to_float(base[r * X.ld + j]);
  }
  Precision p_, gemm_, fp32_ops_;
};

}  // namespace

std::unique_ptr<KernelOps> make_precision_kernels(Precision p, const KernelOps& inner) {
  if (p == Precision::F64) return std::make_unique<ForwardingKernelOps>(inner);
  return std::make_unique<PrecisionKernelOps>(RoundingTypes{p, p, p}, inner);
}

ModelKernels make_autocast_kernels(Precision p, const KernelOps& inner) {
  require(p == Precision::BF16 || p == Precision::F16,
          "--autocast " + std::string(to_string(p)) + " is not a low-precision type; fix: use --autocast bf16 or f16");
  ModelKernels k;
  k.branch = std::make_unique<PrecisionKernelOps>(RoundingTypes{p, p, Precision::F32}, inner);
  k.main = std::make_unique<PrecisionKernelOps>(RoundingTypes{p, Precision::F32, Precision::F32}, inner);
  return k;
}

ModelKernels make_model_kernels(Precision p, bool autocast, const KernelOps& inner) {
  if (autocast) return make_autocast_kernels(p, inner);
  ModelKernels k;
  k.main = make_precision_kernels(p, inner);
  return k;
}

}  // namespace gradflow
