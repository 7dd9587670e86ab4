// backend.cpp — the backend factory: the one place that knows which backends were built (backend.hpp).
#include "gradflow/backend/backend.hpp"

#include "backend/cpu_backend.hpp"
#ifdef GRADFLOW_HAVE_CUDA
#include "backend/cuda/cuda_backend.hpp"
#endif
#include "gradflow/core/error.hpp"

namespace gradflow {

const char* to_string(BackendKind k) { return k == BackendKind::Cpu ? "cpu" : "cuda"; }

std::unique_ptr<Backend> make_backend(BackendKind kind) {
  switch (kind) {
    case BackendKind::Cpu: return make_cpu_backend();
    case BackendKind::Cuda:
#ifdef GRADFLOW_HAVE_CUDA
      return make_cuda_backend();
#else
      throw Error("--device cuda: this gradflow was built without the CUDA backend; fix: rebuild with -DGRADFLOW_CUDA=ON "
                  "on a machine with nvcc, cuBLAS and cuSOLVER (docs/cuda.md), or use --device cpu");
#endif
  }
  throw Error("internal: unknown backend", ErrorKind::Internal);
}

}  // namespace gradflow
