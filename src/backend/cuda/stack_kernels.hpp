// stack_kernels.hpp — the CUDA kernels behind the device engines' KernelOps (cuda_kernel_ops.cpp; kernel_ops.hpp says
// what each computes), callable from host C++ without nvcc. The row-wise VJPs/JVPs run one thread block per row
// over row_math.hpp's per-element functions, the same arithmetic as the CPU's (src/kernels/cpu_kernels.cpp). The
// forward kernels of the model's passes (norm_forward, softmax_rows, column sums) run one thread per row or column,
// serially: correct and simple, first used by the GPU forward (not tuned). Every launcher returns the launch's
// cudaError_t; all run on the default stream.
#pragma once
#include <cstdint>

#include <cuda_runtime_api.h>

namespace gradflow::cuda {

cudaError_t launch_norm_vjp(int kind, const double* xhat, const double* rstd, const double* gamma, double alpha,
                            int64_t n, int64_t d, const double* dy, double* dx, int64_t rows);
cudaError_t launch_norm_jvp(int kind, const double* xhat, const double* rstd, const double* gamma, double alpha,
                            int64_t n, int64_t d, const double* dx, double* dy, int64_t rows);
cudaError_t launch_softmax_vjp(const double* P, int64_t n, double* dp, int64_t copies, double scale);
cudaError_t launch_multiply_tiled(double* x, const double* f, int64_t n, int64_t cols, int64_t rows);
cudaError_t launch_axpby(int64_t count, double a, const double* x, double b, double* y);
cudaError_t launch_scale_columns(const double* x, const double* s, double* y, int64_t rows, int64_t cols);
// u must be zero already (cudaMemsetAsync): sets the k ones of identity_rows.
cudaError_t launch_identity_ones(double* u, int64_t start, int64_t k, int64_t n, int64_t w);
// Per-block partial results into partial[0 .. reduce_blocks(count)): max |x| (NaN when any x is NaN/±Inf), Σ x².
// reduce_blocks(count) <= kMaxReduceBlocks for every count.
inline constexpr int kMaxReduceBlocks = 4096;
int reduce_blocks(int64_t count);
cudaError_t launch_max_abs_partial(const double* x, int64_t count, double* partial);
cudaError_t launch_sum_squares_partial(const double* x, int64_t count, double* partial);
// Σ x_i·y_i per block, as the two above.
cudaError_t launch_dot_partial(const double* x, const double* y, int64_t count, double* partial);

// The model's forward and parameter gradients (kernel_ops.hpp: add_row ... activation).
cudaError_t launch_add_row(double* y, const double* b, int64_t rows, int64_t cols);
cudaError_t launch_add_column_sums(const double* x, int64_t rows, int64_t cols, double* acc);
cudaError_t launch_norm_forward(int kind, const double* x, int64_t rows, int64_t d, double eps, double alpha,
                                double* xhat, double* rstd);
// dgamma/dbeta per column; DyT's dalpha: column j's part into scratch[j] (d doubles), then their sum added to *dalpha.
cudaError_t launch_norm_param_vjp(int kind, const double* xhat, const double* x, const double* gamma, int64_t n,
                                  int64_t d, const double* dy, int64_t rows, double* dgamma, double* dbeta,
                                  double* dalpha, double* scratch);
cudaError_t launch_softmax_rows(double* s, int64_t rows, int64_t cols, bool causal);
cudaError_t launch_activation(int kind, const double* z, int64_t count, double* a, double* fprime);

}  // namespace gradflow::cuda
