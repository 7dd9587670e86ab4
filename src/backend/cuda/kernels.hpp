// kernels.hpp — the CUDA backend's few element-wise kernels (kernels.cu), callable from host C++ without nvcc.
// No Eigen here: nvcc compiles only kernels.cu. Every launcher returns the launch's cudaError_t (the caller turns a
// failure into gradflow::Error with the launcher's name, cuda_check.hpp). All run on the default stream.
#pragma once
#include <cstdint>

#include <cuda_runtime_api.h>

namespace gradflow::cuda {

// *flag (device int, set to 0 by the caller) becomes 1 when any of x[0..count) is NaN or ±Inf.
cudaError_t launch_flag_nonfinite(const double* x, int64_t count, int* flag);
// a[i*ld + i] += s for i in [0, n): adds s·I to the leading (n, n) block of a matrix with leading dimension ld
// (row-major or column-major alike: the diagonal is the same element either way).
cudaError_t launch_add_to_diagonal(double* a, int64_t n, int64_t ld, double s);

}  // namespace gradflow::cuda
