// cpu_kernels.cpp — KernelOps on host memory: GEMMs through Eigen maps (OpenBLAS's DGEMM; a product into a fresh C
// as one dgemm_ call with β = 0), the row-wise VJPs through row_math.hpp's functions, one row at a time (the CUDA
// backend runs the same functions on the GPU).
#include "gradflow/kernels/cpu_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gradflow/kernels/row_math.hpp"
#include "scaled_moments.hpp"

namespace gradflow {
namespace {

using ConstStrided = Eigen::Map<const Mat, 0, Eigen::OuterStride<>>;
using Strided = Eigen::Map<Mat, 0, Eigen::OuterStride<>>;
using ConstRow = Eigen::Map<const RowVec>;
using Row = Eigen::Map<RowVec>;
using ConstRows = Eigen::Map<const Mat>;
using Rows = Eigen::Map<Mat>;

class HostArray final : public KernelArray {
 public:
  explicit HostArray(Index count) : v_(static_cast<size_t>(std::max<Index>(count, 1))), count_(count) {}
  double* data() override { return v_.data(); }
  Index size() const override { return count_; }

 private:
  std::vector<double> v_;
  Index count_;
};

#ifdef EIGEN_USE_BLAS
// Whether Eigen sends C += α·op(A)·op(B) of these sizes to dgemm_ (Eigen 3.4, products/GeneralMatrixMatrix.h): not a
// matrix-vector product (gemv), not an empty one, and not below its coefficient-based threshold (depth + rows + cols
// < EIGEN_GEMM_TO_COEFFBASED_THRESHOLD: a plain loop)
bool blas_product(Index m, Index n, Index k) {
  return m > 1 && n > 1 && k > 0 && k + m + n >= EIGEN_GEMM_TO_COEFFBASED_THRESHOLD;
}
#endif

// The element-wise and row-wise kernels below split their rows (entries, for axpby) between the threads from this
// many entries on: each row or entry is computed by the same code whichever thread takes it, so the bits do not
// depend on the thread count. They are memory-bound passes over a stack of cotangents; inside a parallel region (a
// head's products in attention) they run on the calling thread.
constexpr Index kParallelEntries = Index(1) << 15;

class CpuKernelOps final : public KernelOps {
 public:
  std::unique_ptr<KernelArray> alloc(Index count, const std::string&) const override {
    return std::make_unique<HostArray>(count);  // host memory: choose_engine's estimate refused a run too large
  }
  void upload(const double* host, double* dst, Index count) const override { std::copy(host, host + count, dst); }
  void download(const double* src, double* host, Index count) const override { std::copy(src, src + count, host); }

  void gemm(Index m, Index n, Index k, double alpha, const GemmOperand& A, const GemmOperand& B, double beta,
            double* c, Index ldc, Index c_stride, Index batch) const override {
#ifdef EIGEN_USE_BLAS
    if (beta == 0.0 && blas_product(m, n, k)) {
      // C = α·op(A)·op(B) as one dgemm_ call with β = 0: OpenBLAS zeroes C inside the call, on the threads that
      // compute it (gradflow's dgemm_ splits C between them, blas_threads.cpp), where setZero below would do it on
      // this thread first. The same call as Eigen's for the += below in everything but β, so the same bits:
      // row-major C (m × n) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ, and a row-major X is a column-major Xᵀ.
      const int mi = static_cast<int>(n), ni = static_cast<int>(m), ki = static_cast<int>(k);
      const int lda = static_cast<int>(B.ld), ldb = static_cast<int>(A.ld), ldci = static_cast<int>(ldc);
      const char ta = B.transposed ? 'T' : 'N', tb = A.transposed ? 'T' : 'N';
      const double zero = 0.0;
      for (Index b = 0; b < batch; ++b)
        dgemm_(&ta, &tb, &mi, &ni, &ki, &alpha, B.data + b * B.stride, &lda, A.data + b * A.stride, &ldb, &zero,
               c + b * c_stride, &ldci);
      return;
    }
#endif
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
    const ConstRow gm(gamma, d);
    const double dd = static_cast<double>(d);
#pragma omp parallel for schedule(static) if (rows * d >= kParallelEntries)
    for (Index r = 0; r < rows; ++r) {
      const Index i = r % n;
      const ConstRow xh(xhat + i * d, d);
      const RowVec g = ConstRow(dy + r * d, d).cwiseProduct(gm);
      const double mean_g = kind == rows::kLayerNorm ? g.mean() : 0.0;
      const double mean_gx = kind == rows::kDyT ? 0.0 : g.dot(xh) / dd;
      const double rs = kind == rows::kDyT ? 0.0 : rstd[i];
      double* out = dx + r * d;
      for (Index j = 0; j < d; ++j) out[j] = rows::norm_vjp_element(kind, g[j], xh[j], rs, alpha, mean_g, mean_gx);
    }
  }

  void norm_jvp(int kind, const double* xhat, const double* rstd, const double* gamma, double alpha, Index n, Index d,
                const double* dx, double* dy, Index rows) const override {
    const double dd = static_cast<double>(d);
#pragma omp parallel for schedule(static) if (rows * d >= kParallelEntries)
    for (Index r = 0; r < rows; ++r) {
      const Index i = r % n;
      const ConstRow xh(xhat + i * d, d), t(dx + r * d, d);
      // LayerNorm: the tangent centred first, proj = x̂·(dx − mean dx)/d (two passes); RMSNorm: x̂·dx/d
      double mean_dx = 0, proj = 0;
      if (kind == rows::kLayerNorm) {
        mean_dx = t.mean();
        proj = xh.dot(RowVec(t.array() - mean_dx)) / dd;
      } else if (kind == rows::kRMSNorm) {
        proj = xh.dot(t) / dd;
      }
      const double rs = kind == rows::kDyT ? 0.0 : rstd[i];
      double* out = dy + r * d;
      for (Index j = 0; j < d; ++j) out[j] = rows::norm_jvp_element(kind, t[j], xh[j], gamma[j], rs, alpha, mean_dx, proj);
    }
  }

  void softmax_vjp(const double* P, Index n, double* dp, Index copies, double scale) const override {
    for (Index c = 0; c < copies; ++c)
      for (Index i = 0; i < n; ++i) {
        const ConstRow p(P + i * n, n);
        Row row(dp + (c * n + i) * n, n);
        const double s = p.cwiseProduct(row).sum();
        for (Index j = 0; j < n; ++j) row[j] = rows::softmax_vjp_element(p[j], row[j], s, scale);
      }
  }

  void multiply_tiled(double* x, const double* f, Index n, Index cols, Index rows) const override {
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelEntries)
    for (Index r = 0; r < rows; ++r) {
      const double* fr = f + (r % n) * cols;
      double* xr = x + r * cols;
      for (Index j = 0; j < cols; ++j) xr[j] *= fr[j];
    }
  }

  void axpby(Index count, double a, const double* x, double b, double* y) const override {
    if (b == 0.0) {
#pragma omp parallel for schedule(static) if (count >= kParallelEntries)
      for (Index i = 0; i < count; ++i) y[i] = a * x[i];
    } else {
#pragma omp parallel for schedule(static) if (count >= kParallelEntries)
      for (Index i = 0; i < count; ++i) y[i] = a * x[i] + b * y[i];
    }
  }

  void scale_columns(const double* x, const double* s, double* y, Index rows, Index cols) const override {
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelEntries)
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

  void add_row(double* y, const double* b, Index rows, Index cols) const override {
    Rows(y, rows, cols).rowwise() += ConstRow(b, cols);
  }

  void add_column_sums(const double* x, Index rows, Index cols, double* acc) const override {
    Row(acc, cols) += ConstRows(x, rows, cols).colwise().sum();
  }

  double dot(const double* x, const double* y, Index count) const override {
    return ConstRow(x, count).cwiseProduct(ConstRow(y, count)).sum();
  }

  void norm_forward(int kind, const double* x, Index rows, Index d, double eps, double alpha, double* xhat,
                    double* rstd) const override {
    const ConstRows X(x, rows, d);
    Rows Xh(xhat, rows, d);
    if (kind == rows::kDyT) {
      Xh = (alpha * X.array()).tanh();
      return;
    }
    if (kind == rows::kLayerNorm) {
      // the moment is taken of the centred row, x − μ
      const auto centred = [](const auto& row) { return RowVec(row.array() - row.mean()); };
      for (Index i = 0; i < rows; ++i) kernels::detail::normalize_row(X.row(i), eps, centred, rstd[i], Xh.row(i));
    } else {
      // the moment is taken of the row itself
      const auto itself = [](const auto& row) -> const auto& { return row; };
      for (Index i = 0; i < rows; ++i) kernels::detail::normalize_row(X.row(i), eps, itself, rstd[i], Xh.row(i));
    }
  }

  void norm_param_vjp(int kind, const double* xhat, const double* x, const double* gamma, Index n, Index d,
                      const double* dy, Index rows, double* dgamma, double* dbeta, double* dalpha) const override {
    const ConstRow gm(gamma, d);
    for (Index r = 0; r < rows; ++r) {
      const Index i = r % n;
      const ConstRow dyr(dy + r * d, d), xh(xhat + i * d, d);
      if (dalpha && kind == rows::kDyT) {
        const RowVec sech2 = 1.0 - xh.array().square();
        *dalpha += dyr.cwiseProduct(gm).cwiseProduct(sech2).dot(ConstRow(x + i * d, d));
      }
      if (dgamma) Row(dgamma, d) += dyr.cwiseProduct(xh);
      if (dbeta) Row(dbeta, d) += dyr;
    }
  }

  void softmax_rows(double* s, Index rows, Index cols, bool causal) const override {
    Rows S(s, rows, cols);
    for (Index r = 0; r < rows; ++r) {
      const Index len = causal ? r % cols + 1 : cols;
      const double m = S.row(r).head(len).maxCoeff();
      double z = 0.0;
      for (Index j = 0; j < len; ++j) z += (S(r, j) = std::exp(S(r, j) - m));
      S.row(r).head(len) /= z;
      if (len < cols) S.row(r).tail(cols - len).setZero();
    }
  }

  void activation(int kind, const double* z, Index count, double* a, double* fprime) const override {
    const ConstRow Z(z, count);
    if (a) {
      if (kind == rows::kRelu) Row(a, count) = Z.cwiseMax(0.0);
      else for (Index i = 0; i < count; ++i) a[i] = rows::activation_value(kind, z[i]);
    }
    if (fprime)
      for (Index i = 0; i < count; ++i) fprime[i] = rows::activation_derivative(kind, z[i]);
  }
};

}  // namespace

const KernelOps& cpu_kernels() {
  static const CpuKernelOps ops;
  return ops;
}

}  // namespace gradflow
