// backend.cpp — the backend factory: the one place that knows which backends were built (backend.hpp); the --device
// option's parse, and the run's one backend (RunBackend).
#include "gradflow/backend/backend.hpp"

#include "backend/cpu_backend.hpp"
#ifdef GRADFLOW_HAVE_CUDA
#include "backend/cuda/cuda_backend.hpp"
#endif
#include "gradflow/core/error.hpp"

namespace gradflow {

const char* to_string(BackendKind k) { return k == BackendKind::Cpu ? "cpu" : "cuda"; }

BackendKind parse_backend_kind(const std::string& device) {
  if (device == "cpu") return BackendKind::Cpu;
  if (device == "cuda") return BackendKind::Cuda;
  throw Error("--device '" + device + "' is not a device; fix: use --device cpu or --device cuda");
}

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

RunBackend::RunBackend(BackendKind kind, Factory make) : kind_(kind), make_(std::move(make)) {}

std::shared_ptr<const Backend> RunBackend::get() const {
  if (failed_) std::rethrow_exception(failed_);
  if (!backend_) {
    try {
      std::shared_ptr<const Backend> made = make_(kind_);
      if (!made || made->kind() != kind_)
        throw Error("internal: the backend factory made no " + std::string(to_string(kind_)) + " backend",
                    ErrorKind::Internal);
      backend_ = std::move(made);
    } catch (...) {
      failed_ = std::current_exception();
      throw;
    }
  }
  return backend_;
}

}  // namespace gradflow
