// cuda_check.hpp — every CUDA runtime, cuBLAS and cuSOLVER status of the CUDA backend goes through these: a failure
// becomes a one-line gradflow::Error naming the call and the status (ErrorKind::Internal: a failed device call is
// not the user's input; running out of device memory is checked before allocating, cuda_backend.cpp).
#pragma once
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include "backend/cuda/cuda_api.hpp"
#include "gradflow/core/error.hpp"

namespace gradflow::cuda {

inline void check(cudaError_t s, const char* call) {
  if (s != cudaSuccess)
    throw Error(std::string("--device cuda: ") + call + " failed: " + cudaGetErrorName(s) + " (" +
                    cudaGetErrorString(s) + "); fix: check the GPU with nvidia-smi, or use --device cpu",
                ErrorKind::Internal);
}

inline void check(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("--device cuda: ") + call + " failed: " + api().cublasGetStatusString(s) +
                    "; fix: check the GPU with nvidia-smi, or use --device cpu",
                ErrorKind::Internal);
}

inline void check(cusolverStatus_t s, const char* call) {
  if (s != CUSOLVER_STATUS_SUCCESS)
    throw Error(std::string("--device cuda: ") + call + " failed: cusolverStatus_t " + std::to_string(static_cast<int>(s)) +
                    " (cusolver_common.h); fix: check the GPU with nvidia-smi, or use --device cpu",
                ErrorKind::Internal);
}

}  // namespace gradflow::cuda
