// device_memory.hpp — device memory for the CUDA backend's files: every allocation first checks cudaMemGetInfo and
// refuses (Error, exit code 2) with the sizes and a fix instead of failing inside a kernel.
#pragma once
#include <algorithm>
#include <memory>
#include <string>

#include <cuda_runtime_api.h>

#include "backend/cuda/cuda_check.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/core/format_bytes.hpp"

namespace gradflow::cuda {

struct DeviceFree {
  void operator()(void* p) const noexcept { cudaFree(p); }
};
template <class T>
using DevicePtr = std::unique_ptr<T, DeviceFree>;

[[noreturn]] inline void refuse_memory(const std::string& what, double bytes, size_t free_b, size_t total_b) {
  throw Error("--device cuda: " + what + " needs " + format_bytes(bytes) + " of device memory, " +
              format_bytes(static_cast<double>(free_b)) + " of " + format_bytes(static_cast<double>(total_b)) +
              " is free; fix: lower --seq-len or --d-model (streamed mode: --stream-rows), or use --device cpu");
}

// Device memory for `count` T (at least one, so the pointer is never null), after checking it is free.
template <class T>
DevicePtr<T> device_alloc(size_t count, const std::string& what) {
  const size_t bytes = std::max<size_t>(count, 1) * sizeof(T);
  size_t free_b = 0, total_b = 0;
  check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  if (bytes > free_b) refuse_memory(what, static_cast<double>(bytes), free_b, total_b);
  void* p = nullptr;
  const cudaError_t s = cudaMalloc(&p, bytes);
  if (s == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // clears the (non-sticky) error
    refuse_memory(what, static_cast<double>(bytes), free_b, total_b);
  }
  check(s, "cudaMalloc");
  return DevicePtr<T>(static_cast<T*>(p));
}

template <class T>
T fetch(const T* device_value) {
  T v{};
  check(cudaMemcpy(&v, device_value, sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy (device to host)");
  return v;
}

}  // namespace gradflow::cuda
