// cuda_backend.hpp — the CUDA backend (cuBLAS, cuSOLVER), private to src/backend/; built with -DGRADFLOW_CUDA.
#pragma once
#include <memory>

#include "gradflow/backend/backend.hpp"

namespace gradflow {

// Error (exit code 2) with the fix when no GPU is visible (any cudaGetDeviceCount failure counts as none).
std::unique_ptr<Backend> make_cuda_backend();

}  // namespace gradflow
