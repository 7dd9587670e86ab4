// cuda_api.hpp — cuBLAS and cuSOLVER, loaded with dlopen when a CUDA backend is first made (cuda_api.cpp), not linked:
// a gradflow built with the CUDA backend then starts without mapping them (libcublasLt alone is ~500 MiB of address
// space: every run, and runs under `ulimit -v`, would pay for it), and a machine without them fails only
// --device cuda, with the fix. The function types come from the CUDA headers (decltype), so every call is checked
// by the compiler as a direct call would be. The CUDA runtime itself is linked statically (it loads the driver).
#pragma once
#include <cublas_v2.h>
#include <cusolverDn.h>

namespace gradflow::cuda {

// Members are named by the CUDA headers' macros (cublasCreate is cublasCreate_v2, ...), so a call reads
// api().cublasDgemm_64(...) and dlsym looks up the name the macro stands for.
#define GRADFLOW_CUBLAS_FUNCTIONS(X)                                                                               \
  X(cublasCreate) X(cublasDestroy) X(cublasGetStatusString) X(cublasDgemm_64) X(cublasDgemmStridedBatched_64)    \
  X(cublasDnrm2_64) X(cublasIdamax_64) X(cublasDscal_64) X(cublasDsyrk_64) X(cublasDgeam_64)
#define GRADFLOW_CUSOLVER_FUNCTIONS(X)                                                                             \
  X(cusolverDnCreate) X(cusolverDnDestroy) X(cusolverDnCreateParams) X(cusolverDnDestroyParams)                  \
  X(cusolverDnXgesvd_bufferSize) X(cusolverDnXgesvd) X(cusolverDnXsyevd_bufferSize) X(cusolverDnXsyevd)

struct Api {
#define GRADFLOW_CUDA_API_MEMBER(f) decltype(&::f) f = nullptr;
  GRADFLOW_CUBLAS_FUNCTIONS(GRADFLOW_CUDA_API_MEMBER)
  GRADFLOW_CUSOLVER_FUNCTIONS(GRADFLOW_CUDA_API_MEMBER)
#undef GRADFLOW_CUDA_API_MEMBER
};

// Loaded once (thread-safe); Error (exit code 2) naming the library, dlerror() and the fix when one is missing.
const Api& api();

}  // namespace gradflow::cuda
