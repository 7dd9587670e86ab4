// stack_kernels.cu — see stack_kernels.hpp. Grid-stride loops over 64-bit indices; the row kernels loop over rows
// with one block each and reduce a row's sums in shared memory (warp shuffles, then one warp).
#include <cmath>

#include "gradflow/kernels/row_math.hpp"
#include "stack_kernels.hpp"

namespace gradflow::cuda {
namespace {

constexpr int kThreads = 256;     // element-wise kernels and reductions
constexpr int kRowThreads = 128;  // row kernels: one block per row
constexpr int64_t kMaxBlocks = kMaxReduceBlocks;
constexpr int64_t kMaxRowBlocks = 65535;

int blocks_for(int64_t count) {
  const int64_t b = count / kThreads + (count % kThreads != 0);  // no overflow near INT64_MAX
  return static_cast<int>(b < 1 ? 1 : (b > kMaxBlocks ? kMaxBlocks : b));
}

int row_blocks(int64_t rows) { return static_cast<int>(rows < 1 ? 1 : (rows > kMaxRowBlocks ? kMaxRowBlocks : rows)); }

__device__ double warp_sum(double v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

// The block's totals of a and b, returned to every thread (blockDim.x a multiple of 32, at most 1024).
__device__ void block_sum2(double& a, double& b) {
  __shared__ double sa[32], sb[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  a = warp_sum(a);
  b = warp_sum(b);
  if (lane == 0) {
    sa[warp] = a;
    sb[warp] = b;
  }
  __syncthreads();
  if (warp == 0) {
    a = lane < warps ? sa[lane] : 0.0;
    b = lane < warps ? sb[lane] : 0.0;
    a = warp_sum(a);
    b = warp_sum(b);
    if (lane == 0) {
      sa[0] = a;
      sb[0] = b;
    }
  }
  __syncthreads();
  a = sa[0];
  b = sb[0];
  __syncthreads();  // the next row may write sa/sb again
}

__global__ void norm_vjp_rows(int kind, const double* xhat, const double* rstd, const double* gamma, double alpha,
                              int64_t n, int64_t d, const double* dy, double* dx, int64_t rows) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t i = r % n;
    const double* x = xhat + i * d;
    const double* g_in = dy + r * d;
    double sum_g = 0, sum_gx = 0;
    if (kind != rows::kDyT)
      for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
        const double g = rows::norm_g(g_in[j], gamma[j]);
        sum_g += g;
        sum_gx += g * x[j];
      }
    block_sum2(sum_g, sum_gx);
    const double r_std = kind == rows::kDyT ? 0.0 : rstd[i], dd = static_cast<double>(d);
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x)
      dx[r * d + j] = rows::norm_vjp_element(kind, rows::norm_g(g_in[j], gamma[j]), x[j], r_std, alpha, sum_g / dd,
                                             sum_gx / dd);
  }
}

__global__ void norm_jvp_rows(int kind, const double* xhat, const double* rstd, const double* gamma, double alpha,
                              int64_t n, int64_t d, const double* dx, double* dy, int64_t rows) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t i = r % n;
    const double* x = xhat + i * d;
    const double* t = dx + r * d;
    double sum_dx = 0, sum_xdx = 0, sum_x = 0, unused = 0;
    if (kind != rows::kDyT)
      for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
        sum_dx += t[j];
        sum_xdx += x[j] * t[j];
        sum_x += x[j];
      }
    block_sum2(sum_dx, sum_xdx);
    block_sum2(sum_x, unused);
    double mean_dx = 0, proj = 0;
    rows::norm_jvp_means(kind, sum_dx, sum_xdx, sum_x, d, &mean_dx, &proj);
    const double r_std = kind == rows::kDyT ? 0.0 : rstd[i];
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x)
      dy[r * d + j] = rows::norm_jvp_element(kind, t[j], x[j], gamma[j], r_std, alpha, mean_dx, proj);
  }
}

__global__ void softmax_vjp_rows(const double* P, int64_t n, double* dp, int64_t rows, double scale) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const double* p = P + (r % n) * n;
    double* row = dp + r * n;
    double s = 0, unused = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += p[j] * row[j];
    block_sum2(s, unused);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) row[j] = rows::softmax_vjp_element(p[j], row[j], s, scale);
  }
}

__global__ void multiply_tiled(double* x, const double* f, int64_t n, int64_t cols, int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t block = n * cols;  // f's size: x's row r uses f's row r mod n
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    x[i] *= f[i % block];
}

__global__ void axpby(int64_t count, double a, const double* x, double b, double* y) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    y[i] = b == 0.0 ? a * x[i] : a * x[i] + b * y[i];
}

__global__ void scale_columns(const double* x, const double* s, double* y, int64_t cols, int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    y[i] = s[i % cols] * x[i];
}

__global__ void identity_ones(double* u, int64_t start, int64_t k, int64_t n, int64_t w) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < k; r += stride)
    u[(r * n + (start + r) / w) * w + (start + r) % w] = 1.0;
}

__device__ double max_or_nan(double a, double b) { return (isnan(a) || isnan(b)) ? a + b : fmax(a, b); }

__global__ void max_abs_partial(const double* x, int64_t count, double* partial) {
  __shared__ double s[kThreads];
  double m = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    m = max_or_nan(m, isfinite(x[i]) ? fabs(x[i]) : nan(""));
  s[threadIdx.x] = m;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) s[threadIdx.x] = max_or_nan(s[threadIdx.x], s[threadIdx.x + h]);
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}

__global__ void sum_squares_partial(const double* x, int64_t count, double* partial) {
  __shared__ double s[kThreads];
  double v = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) v += x[i] * x[i];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) s[threadIdx.x] += s[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}

__global__ void dot_partial(const double* x, const double* y, int64_t count, double* partial) {
  __shared__ double s[kThreads];
  double v = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) v += x[i] * y[i];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) s[threadIdx.x] += s[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}

__global__ void add_row(double* y, const double* b, int64_t cols, int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    y[i] += b[i % cols];
}

// one thread per column, the rows in order (as the CPU's sums)
__global__ void add_column_sums(const double* x, int64_t rows, int64_t cols, double* acc) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < cols; j += stride) {
    double s = 0;
    for (int64_t r = 0; r < rows; ++r) s += x[r * cols + j];
    acc[j] += s;
  }
}

// One row of LayerNorm (centred) or RMSNorm, exact at any finite scale: the plain moment first; when it overflows
// for a finite row, the row scaled by 2^-e (max|x|·2^-e in [0.5, 1)) as src/kernels/scaled_moments.hpp does.
__device__ void normalize_row(bool centred, const double* x, int64_t d, double eps, double* xhat, double* r_out) {
  const double dd = static_cast<double>(d);
  double mean = 0, m = 0;
  bool finite = true;
  if (centred) {
    for (int64_t j = 0; j < d; ++j) mean += x[j];
    mean /= dd;
  }
  for (int64_t j = 0; j < d; ++j) {
    const double c = x[j] - mean;
    m += c * c;
    finite = finite && isfinite(x[j]);
  }
  m /= dd;
  if (isfinite(m) || !finite) {
    const double r = 1.0 / sqrt(m + eps);
    *r_out = r;
    for (int64_t j = 0; j < d; ++j) xhat[j] = (x[j] - mean) * r;
    return;
  }
  double mx = 0;
  for (int64_t j = 0; j < d; ++j) mx = fmax(mx, fabs(x[j]));
  int e = 0;
  frexp(mx, &e);
  double ms_mean = 0, ms = 0;
  if (centred) {
    for (int64_t j = 0; j < d; ++j) ms_mean += ldexp(x[j], -e);
    ms_mean /= dd;
  }
  for (int64_t j = 0; j < d; ++j) {
    const double c = ldexp(x[j], -e) - ms_mean;
    ms += c * c;
  }
  ms /= dd;
  if (ms == 0.0) {
    *r_out = 1.0 / sqrt(eps);
    for (int64_t j = 0; j < d; ++j) xhat[j] = 0.0;
    return;
  }
  const double rs = 1.0 / sqrt(ms + ldexp(eps, -2 * e));
  *r_out = ldexp(rs, -e);
  for (int64_t j = 0; j < d; ++j) xhat[j] = (ldexp(x[j], -e) - ms_mean) * rs;
}

__global__ void norm_forward_rows(int kind, const double* x, int64_t rows, int64_t d, double eps, double alpha,
                                  double* xhat, double* rstd) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += stride) {
    if (kind == rows::kDyT) {
      for (int64_t j = 0; j < d; ++j) xhat[r * d + j] = tanh(alpha * x[r * d + j]);
    } else {
      normalize_row(kind == rows::kLayerNorm, x + r * d, d, eps, xhat + r * d, rstd + r);
    }
  }
}

__global__ void norm_param_columns(int kind, const double* xhat, const double* x, const double* gamma, int64_t n,
                                   int64_t d, const double* dy, int64_t rows, double* dgamma, double* dbeta,
                                   double* scratch) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < d; j += stride) {
    double sg = 0, sb = 0, sa = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = r % n;
      const double g = dy[r * d + j], xh = xhat[i * d + j];
      sg += g * xh;
      sb += g;
      if (scratch) sa += g * gamma[j] * (1.0 - xh * xh) * x[i * d + j];
    }
    if (dgamma) dgamma[j] += sg;
    if (dbeta) dbeta[j] += sb;
    if (scratch) scratch[j] = sa;
  }
}

__global__ void add_sum(const double* v, int64_t count, double* acc) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    double s = 0;
    for (int64_t j = 0; j < count; ++j) s += v[j];
    *acc += s;
  }
}

__global__ void softmax_rows_serial(double* s, int64_t rows, int64_t cols, bool causal) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += stride) {
    double* row = s + r * cols;
    const int64_t len = causal ? r % cols + 1 : cols;
    double m = row[0];
    for (int64_t j = 1; j < len; ++j) m = fmax(m, row[j]);
    double z = 0;
    for (int64_t j = 0; j < len; ++j) z += (row[j] = exp(row[j] - m));
    for (int64_t j = 0; j < len; ++j) row[j] /= z;
    for (int64_t j = len; j < cols; ++j) row[j] = 0.0;
  }
}

__global__ void activation(int kind, const double* z, int64_t count, double* a, double* fprime) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    if (a) a[i] = rows::activation_value(kind, z[i]);
    if (fprime) fprime[i] = rows::activation_derivative(kind, z[i]);
  }
}

}  // namespace

cudaError_t launch_norm_vjp(int kind, const double* xhat, const double* rstd, const double* gamma, double alpha,
                            int64_t n, int64_t d, const double* dy, double* dx, int64_t rows) {
  if (rows <= 0) return cudaSuccess;
  norm_vjp_rows<<<row_blocks(rows), kRowThreads>>>(kind, xhat, rstd, gamma, alpha, n, d, dy, dx, rows);
  return cudaGetLastError();
}

cudaError_t launch_norm_jvp(int kind, const double* xhat, const double* rstd, const double* gamma, double alpha,
                            int64_t n, int64_t d, const double* dx, double* dy, int64_t rows) {
  if (rows <= 0) return cudaSuccess;
  norm_jvp_rows<<<row_blocks(rows), kRowThreads>>>(kind, xhat, rstd, gamma, alpha, n, d, dx, dy, rows);
  return cudaGetLastError();
}

cudaError_t launch_softmax_vjp(const double* P, int64_t n, double* dp, int64_t copies, double scale) {
  if (copies <= 0 || n <= 0) return cudaSuccess;
  softmax_vjp_rows<<<row_blocks(copies * n), kRowThreads>>>(P, n, dp, copies * n, scale);
  return cudaGetLastError();
}

cudaError_t launch_multiply_tiled(double* x, const double* f, int64_t n, int64_t cols, int64_t rows) {
  const int64_t count = rows * cols;
  if (count <= 0) return cudaSuccess;
  multiply_tiled<<<blocks_for(count), kThreads>>>(x, f, n, cols, count);
  return cudaGetLastError();
}

cudaError_t launch_axpby(int64_t count, double a, const double* x, double b, double* y) {
  if (count <= 0) return cudaSuccess;
  axpby<<<blocks_for(count), kThreads>>>(count, a, x, b, y);
  return cudaGetLastError();
}

cudaError_t launch_scale_columns(const double* x, const double* s, double* y, int64_t rows, int64_t cols) {
  const int64_t count = rows * cols;
  if (count <= 0) return cudaSuccess;
  scale_columns<<<blocks_for(count), kThreads>>>(x, s, y, cols, count);
  return cudaGetLastError();
}

cudaError_t launch_identity_ones(double* u, int64_t start, int64_t k, int64_t n, int64_t w) {
  if (k <= 0) return cudaSuccess;
  identity_ones<<<blocks_for(k), kThreads>>>(u, start, k, n, w);
  return cudaGetLastError();
}

int reduce_blocks(int64_t count) { return blocks_for(count); }

cudaError_t launch_max_abs_partial(const double* x, int64_t count, double* partial) {
  max_abs_partial<<<blocks_for(count), kThreads>>>(x, count, partial);
  return cudaGetLastError();
}

cudaError_t launch_sum_squares_partial(const double* x, int64_t count, double* partial) {
  sum_squares_partial<<<blocks_for(count), kThreads>>>(x, count, partial);
  return cudaGetLastError();
}

cudaError_t launch_dot_partial(const double* x, const double* y, int64_t count, double* partial) {
  dot_partial<<<blocks_for(count), kThreads>>>(x, y, count, partial);
  return cudaGetLastError();
}

cudaError_t launch_add_row(double* y, const double* b, int64_t rows, int64_t cols) {
  const int64_t count = rows * cols;
  if (count <= 0) return cudaSuccess;
  add_row<<<blocks_for(count), kThreads>>>(y, b, cols, count);
  return cudaGetLastError();
}

cudaError_t launch_add_column_sums(const double* x, int64_t rows, int64_t cols, double* acc) {
  if (cols <= 0) return cudaSuccess;
  add_column_sums<<<blocks_for(cols), kThreads>>>(x, rows, cols, acc);
  return cudaGetLastError();
}

cudaError_t launch_norm_forward(int kind, const double* x, int64_t rows, int64_t d, double eps, double alpha,
                                double* xhat, double* rstd) {
  if (rows <= 0) return cudaSuccess;
  norm_forward_rows<<<blocks_for(rows), kThreads>>>(kind, x, rows, d, eps, alpha, xhat, rstd);
  return cudaGetLastError();
}

cudaError_t launch_norm_param_vjp(int kind, const double* xhat, const double* x, const double* gamma, int64_t n,
                                  int64_t d, const double* dy, int64_t rows, double* dgamma, double* dbeta,
                                  double* dalpha, double* scratch) {
  if (d <= 0) return cudaSuccess;
  double* col_alpha = kind == rows::kDyT && dalpha ? scratch : nullptr;
  norm_param_columns<<<blocks_for(d), kThreads>>>(kind, xhat, x, gamma, n, d, dy, rows, dgamma, dbeta, col_alpha);
  if (col_alpha) add_sum<<<1, 1>>>(col_alpha, d, dalpha);
  return cudaGetLastError();
}

cudaError_t launch_softmax_rows(double* s, int64_t rows, int64_t cols, bool causal) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  softmax_rows_serial<<<blocks_for(rows), kThreads>>>(s, rows, cols, causal);
  return cudaGetLastError();
}

cudaError_t launch_activation(int kind, const double* z, int64_t count, double* a, double* fprime) {
  if (count <= 0) return cudaSuccess;
  activation<<<blocks_for(count), kThreads>>>(kind, z, count, a, fprime);
  return cudaGetLastError();
}

}  // namespace gradflow::cuda
