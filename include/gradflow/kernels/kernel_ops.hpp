// kernel_ops.hpp — the primitive operations gradflow's arithmetic is written in: strided-batched GEMM, the row-wise
// norms and softmax (forward, VJP, JVP), activations, element-wise products and sums, reductions. The model's own
// passes (src/ops/: forward, backward, parameter JVP, through the kernels the Model holds) and the device engines
// (matrix_free/device_chain.hpp) both call them. A backend provides them on its own memory (Backend::kernels()):
// the CPU's, the reference, run on host memory with Eigen/OpenBLAS (src/kernels/cpu_kernels.cpp, cpu_kernels()), the
// CUDA backend's on the GPU with cuBLAS and small kernels (src/backend/cuda/cuda_kernel_ops.cpp, stack_kernels.cu);
// both over row_math.hpp's per-element formulas. Tests run the device engines on the CPU ops against the model's
// VJPs, and every kernel of every backend built against the CPU's (test-backend-ops style).
// Every matrix is row-major: element (i, j) of a matrix with leading dimension ld is at data[i·ld + j]. Pointers are
// into the backend's memory (device pointers for CUDA). Calls are ordered (CUDA: the default stream); the reductions
// and download() return when their result is on the host.
#pragma once
#include <memory>
#include <string>

#include "gradflow/core/types.hpp"

namespace gradflow {

// Memory of the backend's: `size()` doubles at data() (uninitialized).
class KernelArray {
 public:
  virtual ~KernelArray() = default;
  virtual double* data() = 0;
  virtual Index size() const = 0;
};

// One operand of a batched GEMM: problem b reads the matrix at data + b·stride (stride 0: the same matrix for all).
struct GemmOperand {
  const double* data;
  Index ld;
  Index stride = 0;
  bool transposed = false;  // op(X) = Xᵀ
};

class KernelOps {
 public:
  virtual ~KernelOps() = default;
  // `count` doubles; Error (exit code 2) naming `what`, the size and the fix when the memory is not there.
  virtual std::unique_ptr<KernelArray> alloc(Index count, const std::string& what) const = 0;
  virtual void upload(const double* host, double* dst, Index count) const = 0;
  virtual void download(const double* src, double* host, Index count) const = 0;
  // For b in [0, batch): C_b = alpha·op(A_b)·op(B_b) + beta·C_b with op(A_b) (m, k), op(B_b) (k, n), C_b (m, n) at
  // c + b·c_stride (leading dimension ldc). beta = 0 ignores C's old contents (NaN included).
  virtual void gemm(Index m, Index n, Index k, double alpha, const GemmOperand& A, const GemmOperand& B, double beta,
                    double* c, Index ldc, Index c_stride, Index batch) const = 0;
  // dx = J_normᵀ·dy for `rows` stacked rows of width d (row r uses the cache's row r mod n: xhat (n, d), rstd (n));
  // kind as rows::NormCode; rstd unused (may be null) for DyT, alpha used only by DyT. dx may not alias dy.
  virtual void norm_vjp(int kind, const double* xhat, const double* rstd, const double* gamma, double alpha, Index n,
                        Index d, const double* dy, double* dx, Index rows) const = 0;
  // dy = J_norm·dx (the JVP), rows and arguments as norm_vjp.
  virtual void norm_jvp(int kind, const double* xhat, const double* rstd, const double* gamma, double alpha, Index n,
                        Index d, const double* dx, double* dy, Index rows) const = 0;
  // In place, for `copies` stacked (n, n) blocks dp (contiguous): each row of each block becomes
  // scale · p ⊙ (dp − Σ p ⊙ dp) with p the same row of P (n, n).
  virtual void softmax_vjp(const double* P, Index n, double* dp, Index copies, double scale) const = 0;
  // x (rows, cols) ⊙= f tiled: x(r, j) *= f(r mod n, j), f (n, cols).
  virtual void multiply_tiled(double* x, const double* f, Index n, Index cols, Index rows) const = 0;
  // y = a·x + b·y over `count` doubles (b = 0 ignores y's old contents).
  virtual void axpby(Index count, double a, const double* x, double b, double* y) const = 0;
  // y(r, j) = s_j · x(r, j) for (rows, cols) x and y (may alias), s (cols).
  virtual void scale_columns(const double* x, const double* s, double* y, Index rows, Index cols) const = 0;
  // dst(r, j) = src(r, j) for (rows, cols) matrices with leading dimensions ld_src and ld_dst (not overlapping).
  virtual void copy_2d(const double* src, Index ld_src, double* dst, Index ld_dst, Index rows, Index cols) const = 0;
  // u (k·n, w) = rows start .. start+k−1 of the (n·w)-identity: block r is zero but for a 1 at ((start+r) / w,
  // (start+r) mod w).
  virtual void identity_rows(double* u, Index start, Index k, Index n, Index w) const = 0;
  // max |x_i|, or NaN when any x_i is NaN or ±Inf.
  virtual double max_abs(const double* x, Index count) const = 0;
  // Σ x_i² (the caller keeps max|x| in range: no rescaling here).
  virtual double sum_squares(const double* x, Index count) const = 0;

  // --- the model's forward and parameter gradients (src/ops/) ---
  // y(r, j) += b_j for (rows, cols) y (leading dimension cols), b (cols).
  virtual void add_row(double* y, const double* b, Index rows, Index cols) const = 0;
  // A linear layer with its bias, C (m, n) = op(A)·op(B) + b in every row (leading dimension n): one operation, so
  // a kernel that rounds its outputs rounds C once (a fused GEMM epilogue: PyTorch's addmm, cuBLASLt). Default:
  // gemm, then add_row.
  virtual void gemm_add_row(Index m, Index n, Index k, const GemmOperand& A, const GemmOperand& B, const double* b,
                            double* c) const {
    gemm(m, n, k, 1.0, A, B, 0.0, c, n, 0, 1);
    add_row(c, b, m, n);
  }
  // acc_j += Σ_r x(r, j) over (rows, cols) x, the rows in order.
  virtual void add_column_sums(const double* x, Index rows, Index cols, double* acc) const = 0;
  // Σ x_i·y_i.
  virtual double dot(const double* x, const double* y, Index count) const = 0;
  // `rows` rows of width d normalized: xhat and rstd (rows) as NormCache (kind as rows::NormCode): LayerNorm and
  // RMSNorm exact at any finite scale (a row whose moment overflows is rescaled by a power of two first, docs/math.md);
  // DyT: xhat = tanh(α·x), rstd not written (may be null). eps unused by DyT, alpha only by DyT.
  virtual void norm_forward(int kind, const double* x, Index rows, Index d, double eps, double alpha, double* xhat,
                            double* rstd) const = 0;
  // The norm's parameter gradients for `rows` stacked cotangent rows dy (row r uses the cache's row r mod n), the
  // rows in order: dgamma_j += Σ_r dy(r, j)·xhat(r mod n, j); dbeta_j += Σ_r dy(r, j); DyT also dalpha +=
  // Σ_r Σ_j dy(r, j)·γ_j·(1 − xhat²)·x(r mod n, j) (x: the norm's input, DyT only). Any output may be null.
  virtual void norm_param_vjp(int kind, const double* xhat, const double* x, const double* gamma, Index n, Index d,
                              const double* dy, Index rows, double* dgamma, double* dbeta, double* dalpha) const = 0;
  // In place, each row of (rows, cols) s becomes softmax(row); causal: row r keeps only its first (r mod cols) + 1
  // entries (the rest exact zeros), for stacked (cols, cols) blocks.
  virtual void softmax_rows(double* s, Index rows, Index cols, bool causal) const = 0;
  // a = f(z) and fprime = f'(z) over `count` doubles (either output may be null); kind as rows::ActivationCode.
  virtual void activation(int kind, const double* z, Index count, double* a, double* fprime) const = 0;
};

}  // namespace gradflow
