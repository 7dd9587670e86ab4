// cuda_kernel_ops.hpp — the CUDA backend's KernelOps (kernel_ops.hpp): cuBLAS for the GEMMs, stack_kernels.cu for the
// rest. Private to src/backend/cuda/.
#pragma once
#include <memory>

#include <cublas_v2.h>

#include "gradflow/kernels/kernel_ops.hpp"

namespace gradflow {

// `blas` stays the caller's (the backend's handle) and must outlive the ops.
std::unique_ptr<KernelOps> make_cuda_kernel_ops(cublasHandle_t blas);

}  // namespace gradflow
