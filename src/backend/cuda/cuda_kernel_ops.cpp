// cuda_kernel_ops.cpp — KernelOps on the GPU (kernel_ops.hpp). Layout: a row-major (r, c) matrix with leading
// dimension ld is, read column-major, its transpose (c, r) with the same ld; so the row-major product
// C = op(A)·op(B) is the column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: cuBLAS gets B first, the transpose flags as given, and
// m, n swapped (the same identity as cuda_backend.cpp's product walk). Every status is checked (cuda_check.hpp).
#include "backend/cuda/cuda_kernel_ops.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/cuda_check.hpp"
#include "backend/cuda/device_memory.hpp"
#include "backend/cuda/stack_kernels.hpp"

namespace gradflow {
namespace {

using cuda::check;

class DeviceArray final : public KernelArray {
 public:
  DeviceArray(Index count, const std::string& what)
      : p_(cuda::device_alloc<double>(static_cast<size_t>(count), what)), count_(count) {}
  double* data() override { return p_.get(); }
  Index size() const override { return count_; }

 private:
  cuda::DevicePtr<double> p_;
  Index count_;
};

class CudaKernelOps final : public KernelOps {
 public:
  explicit CudaKernelOps(cublasHandle_t blas)
      : blas_(blas), partial_(cuda::device_alloc<double>(cuda::kMaxReduceBlocks, "the reductions' partial sums")),
        host_partial_(cuda::kMaxReduceBlocks) {}

  std::unique_ptr<KernelArray> alloc(Index count, const std::string& what) const override {
    return std::make_unique<DeviceArray>(count, what);
  }
  void upload(const double* host, double* dst, Index count) const override {
    if (count > 0)
      check(cudaMemcpy(dst, host, static_cast<size_t>(count) * sizeof(double), cudaMemcpyHostToDevice),
            "cudaMemcpy (host to device)");
  }
  void download(const double* src, double* host, Index count) const override {
    if (count > 0)
      check(cudaMemcpy(host, src, static_cast<size_t>(count) * sizeof(double), cudaMemcpyDeviceToHost),
            "cudaMemcpy (device to host)");
  }

  void gemm(Index m, Index n, Index k, double alpha, const GemmOperand& A, const GemmOperand& B, double beta,
            double* c, Index ldc, Index c_stride, Index batch) const override {
    if (m <= 0 || n <= 0 || batch <= 0) return;
    const cublasOperation_t opA = A.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opB = B.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (batch == 1)
      check(cuda::api().cublasDgemm_64(blas_, opB, opA, n, m, k, &alpha, B.data, B.ld, A.data, A.ld, &beta, c, ldc),
            "cublasDgemm_64");
    else
      check(cuda::api().cublasDgemmStridedBatched_64(blas_, opB, opA, n, m, k, &alpha, B.data, B.ld, B.stride, A.data,
                                                     A.ld, A.stride, &beta, c, ldc, c_stride, batch),
            "cublasDgemmStridedBatched_64");
  }

  void norm_vjp(int kind, const double* xhat, const double* rstd, const double* gamma, double alpha, Index n, Index d,
                const double* dy, double* dx, Index rows) const override {
    check(cuda::launch_norm_vjp(kind, xhat, rstd, gamma, alpha, n, d, dy, dx, rows), "norm_vjp kernel");
  }
  void norm_jvp(int kind, const double* xhat, const double* rstd, const double* gamma, double alpha, Index n, Index d,
                const double* dx, double* dy, Index rows) const override {
    check(cuda::launch_norm_jvp(kind, xhat, rstd, gamma, alpha, n, d, dx, dy, rows), "norm_jvp kernel");
  }
  void softmax_vjp(const double* P, Index n, double* dp, Index copies, double scale) const override {
    check(cuda::launch_softmax_vjp(P, n, dp, copies, scale), "softmax_vjp kernel");
  }
  void multiply_tiled(double* x, const double* f, Index n, Index cols, Index rows) const override {
    check(cuda::launch_multiply_tiled(x, f, n, cols, rows), "multiply_tiled kernel");
  }
  void axpby(Index count, double a, const double* x, double b, double* y) const override {
    check(cuda::launch_axpby(count, a, x, b, y), "axpby kernel");
  }
  void scale_columns(const double* x, const double* s, double* y, Index rows, Index cols) const override {
    check(cuda::launch_scale_columns(x, s, y, rows, cols), "scale_columns kernel");
  }
  void copy_2d(const double* src, Index ld_src, double* dst, Index ld_dst, Index rows, Index cols) const override {
    if (rows == 0 || cols == 0) return;
    check(cudaMemcpy2DAsync(dst, static_cast<size_t>(ld_dst) * sizeof(double), src,
                            static_cast<size_t>(ld_src) * sizeof(double), static_cast<size_t>(cols) * sizeof(double),
                            static_cast<size_t>(rows), cudaMemcpyDeviceToDevice, nullptr),
          "cudaMemcpy2DAsync (device to device)");
  }
  void identity_rows(double* u, Index start, Index k, Index n, Index w) const override {
    check(cudaMemsetAsync(u, 0, static_cast<size_t>(k * n * w) * sizeof(double)), "cudaMemsetAsync");
    check(cuda::launch_identity_ones(u, start, k, n, w), "identity_ones kernel");
  }
  double max_abs(const double* x, Index count) const override {
    if (count <= 0) return 0.0;
    double m = 0;
    for (const double v : partials(cuda::launch_max_abs_partial(x, count, partial_.get()), "max_abs kernel", count))
      m = (std::isnan(m) || std::isnan(v)) ? std::numeric_limits<double>::quiet_NaN() : std::max(m, v);
    return m;
  }
  double sum_squares(const double* x, Index count) const override {
    if (count <= 0) return 0.0;
    double s = 0;
    for (const double v : partials(cuda::launch_sum_squares_partial(x, count, partial_.get()), "sum_squares kernel", count))
      s += v;
    return s;
  }

  void add_row(double* y, const double* b, Index rows, Index cols) const override {
    check(cuda::launch_add_row(y, b, rows, cols), "add_row kernel");
  }
  void add_column_sums(const double* x, Index rows, Index cols, double* acc) const override {
    check(cuda::launch_add_column_sums(x, rows, cols, acc), "add_column_sums kernel");
  }
  double dot(const double* x, const double* y, Index count) const override {
    if (count <= 0) return 0.0;
    double s = 0;
    for (const double v : partials(cuda::launch_dot_partial(x, y, count, partial_.get()), "dot kernel", count)) s += v;
    return s;
  }
  void norm_forward(int kind, const double* x, Index rows, Index d, double eps, double alpha, double* xhat,
                    double* rstd) const override {
    check(cuda::launch_norm_forward(kind, x, rows, d, eps, alpha, xhat, rstd), "norm_forward kernel");
  }
  void norm_param_vjp(int kind, const double* xhat, const double* x, const double* gamma, Index n, Index d,
                      const double* dy, Index rows, double* dgamma, double* dbeta, double* dalpha) const override {
    cuda::DevicePtr<double> scratch;
    if (dalpha) scratch = cuda::device_alloc<double>(static_cast<size_t>(d), "DyT's alpha gradient, per column");
    check(cuda::launch_norm_param_vjp(kind, xhat, x, gamma, n, d, dy, rows, dgamma, dbeta, dalpha, scratch.get()),
          "norm_param_vjp kernel");
    if (scratch) check(cudaDeviceSynchronize(), "norm_param_vjp kernel");  // before the scratch is freed
  }
  void softmax_rows(double* s, Index rows, Index cols, bool causal) const override {
    check(cuda::launch_softmax_rows(s, rows, cols, causal), "softmax_rows kernel");
  }
  void activation(int kind, const double* z, Index count, double* a, double* fprime) const override {
    check(cuda::launch_activation(kind, z, count, a, fprime), "activation kernel");
  }

 private:
  // The blocks' partial results of a reduction just launched, on the host.
  const std::vector<double>& partials(cudaError_t launched, const char* what, Index count) const {
    check(launched, what);
    host_partial_.resize(static_cast<size_t>(cuda::reduce_blocks(count)));
    download(partial_.get(), host_partial_.data(), static_cast<Index>(host_partial_.size()));
    return host_partial_;
  }

  cublasHandle_t blas_;
  cuda::DevicePtr<double> partial_;
  mutable std::vector<double> host_partial_;
};

}  // namespace

std::unique_ptr<KernelOps> make_cuda_kernel_ops(cublasHandle_t blas) { return std::make_unique<CudaKernelOps>(blas); }

}  // namespace gradflow
