// cpu_kernel_ops.cpp — KernelOps on host memory: GEMMs through Eigen maps (OpenBLAS's DGEMM), the row-wise VJPs
// through row_math.hpp's functions, one row at a time (the CUDA backend runs the same functions on the GPU).
#include "backend/cpu_kernel_ops.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gradflow/backend/row_math.hpp"

namespace gradflow {
namespace {

using ConstStrided = Eigen::Map<const Mat, 0, Eigen::OuterStride<>>;
using Strided = Eigen::Map<Mat, 0, Eigen::OuterStride<>>;

class HostArray final : public KernelArray {
 public:
  explicit HostArray(Index count) : v_(static_cast<size_t>(std::max<Index>(count, 1))), count_(count) {}
  double* data() override { return v_.data(); }
  Index size() const override { return count_; }

 private:
  std::vector<double> v_;
  Index count_;
};

class CpuKernelOps final : public KernelOps {
 public:
  std::unique_ptr<KernelArray> alloc(Index count, const std::string&) const override {
    return std::make_unique<HostArray>(count);  // host memory: choose_engine's estimate refused a run too large
  }
  void upload(const double* host, double* dst, Index count) const override { std::copy(host, host + count, dst); }
  void download(const double* src, double* host, Index count) const override { std::copy(src, src + count, host); }

  void gemm(Index m, Index n, Index k, double alpha, const GemmOperand& A, const GemmOperand& B, double beta,
            double* c, Index ldc, Index c_stride, Index batch) const override {
    for (Index b = 0; b < batch; ++b) {
      const ConstStrided a(A.data + b * A.stride, A.transposed ? k : m, A.transposed ? m : k, Eigen::OuterStride<>(A.ld));
      const ConstStrided bb(B.data + b * B.stride, B.transposed ? n : k, B.transposed ? k : n, Eigen::OuterStride<>(B.ld));
      Strided C(c + b * c_stride, m, n, Eigen::OuterStride<>(ldc));
      if (beta == 0.0) C.setZero();
      else if (beta != 1.0) C *= beta;
      if (A.transposed && B.transposed) C.noalias() += alpha * a.transpose() * bb.transpose();
      else if (A.transposed) C.noalias() += alpha * a.transpose() * bb;
      else if (B.transposed) C.noalias() += alpha * a * bb.transpose();
      else C.noalias() += alpha * a * bb;
    }
  }

  void norm_vjp(int kind, const double* xhat, const double* rstd, const double* gamma, double alpha, Index n, Index d,
                const double* dy, double* dx, Index rows) const override {
    for (Index r = 0; r < rows; ++r) {
      const Index i = r % n;
      rows::norm_vjp_row(kind, xhat + i * d, kind == rows::kDyT ? 0.0 : rstd[i], gamma, alpha, dy + r * d, dx + r * d, d);
    }
  }

  void norm_jvp(int kind, const double* xhat, const double* rstd, const double* gamma, double alpha, Index n, Index d,
                const double* dx, double* dy, Index rows) const override {
    for (Index r = 0; r < rows; ++r) {
      const Index i = r % n;
      rows::norm_jvp_row(kind, xhat + i * d, kind == rows::kDyT ? 0.0 : rstd[i], gamma, alpha, dx + r * d, dy + r * d, d);
    }
  }

  void softmax_vjp(const double* P, Index n, double* dp, Index copies, double scale) const override {
    for (Index c = 0; c < copies; ++c)
      for (Index i = 0; i < n; ++i) rows::softmax_vjp_row(P + i * n, dp + (c * n + i) * n, n, scale);
  }

  void multiply_tiled(double* x, const double* f, Index n, Index cols, Index rows) const override {
    for (Index r = 0; r < rows; ++r) {
      const double* fr = f + (r % n) * cols;
      double* xr = x + r * cols;
      for (Index j = 0; j < cols; ++j) xr[j] *= fr[j];
    }
  }

  void axpby(Index count, double a, const double* x, double b, double* y) const override {
    if (b == 0.0)
      for (Index i = 0; i < count; ++i) y[i] = a * x[i];
    else
      for (Index i = 0; i < count; ++i) y[i] = a * x[i] + b * y[i];
  }

  void scale_columns(const double* x, const double* s, double* y, Index rows, Index cols) const override {
    for (Index r = 0; r < rows; ++r)
      for (Index j = 0; j < cols; ++j) y[r * cols + j] = s[j] * x[r * cols + j];
  }

  void copy_2d(const double* src, Index ld_src, double* dst, Index ld_dst, Index rows, Index cols) const override {
    for (Index r = 0; r < rows; ++r) std::copy(src + r * ld_src, src + r * ld_src + cols, dst + r * ld_dst);
  }

  void identity_rows(double* u, Index start, Index k, Index n, Index w) const override {
    std::fill(u, u + k * n * w, 0.0);
    for (Index r = 0; r < k; ++r) u[(r * n + (start + r) / w) * w + (start + r) % w] = 1.0;
  }

  double max_abs(const double* x, Index count) const override {
    double m = 0;
    for (Index i = 0; i < count; ++i) {
      if (!std::isfinite(x[i])) return std::numeric_limits<double>::quiet_NaN();
      m = std::max(m, std::abs(x[i]));
    }
    return m;
  }

  double sum_squares(const double* x, Index count) const override {
    double s = 0;
    for (Index i = 0; i < count; ++i) s += x[i] * x[i];
    return s;
  }
};

}  // namespace

const KernelOps& cpu_kernel_ops() {
  static const CpuKernelOps ops;
  return ops;
}

}  // namespace gradflow
