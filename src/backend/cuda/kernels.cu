// kernels.cu — element-wise kernels of the CUDA backend (kernels.hpp). Grid-stride loops over 64-bit indices, so any
// buffer size works with a bounded grid.
#include "kernels.hpp"

namespace gradflow::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 4096;

int blocks_for(int64_t count) {
  const int64_t b = (count + kThreads - 1) / kThreads;
  return static_cast<int>(b < 1 ? 1 : (b > kMaxBlocks ? kMaxBlocks : b));
}

__global__ void flag_nonfinite(const double* x, int64_t count, int* flag) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    if (!isfinite(x[i])) *flag = 1;  // benign race: every writer writes 1
}

__global__ void add_to_diagonal(double* a, int64_t n, int64_t ld, double s) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) a[i * ld + i] += s;
}

}  // namespace

cudaError_t launch_flag_nonfinite(const double* x, int64_t count, int* flag) {
  if (count <= 0) return cudaSuccess;
  flag_nonfinite<<<blocks_for(count), kThreads>>>(x, count, flag);
  return cudaGetLastError();
}

cudaError_t launch_add_to_diagonal(double* a, int64_t n, int64_t ld, double s) {
  if (n <= 0) return cudaSuccess;
  add_to_diagonal<<<blocks_for(n), kThreads>>>(a, n, ld, s);
  return cudaGetLastError();
}

}  // namespace gradflow::cuda
