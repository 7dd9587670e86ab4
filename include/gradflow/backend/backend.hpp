// backend.hpp — the seam between the engine and the hardware its dense linear algebra runs on (the ceres DenseQR
// pattern: one abstract interface, final backends, a factory that holds the only #ifdef). A backend owns its
// buffers, which may live in device memory; nothing brings a buffer back to the host except what a report needs
// (its norms and singular values, or to_host() when a caller asks for the matrix).
// Today: the explicit engine's product walk P_l = P_{l+1}·B_l and everything the reports take from B_l and P_l
// (Frobenius and spectral norms, ‖B_l − I‖₂, all singular values). The CPU backend is OpenBLAS/LAPACK/Eigen
// (src/backend/cpu_backend.cpp) with the results the engine always had. The CUDA backend (src/backend/cuda/,
// -DGRADFLOW_CUDA, --device cuda: cuBLAS DGEMM, cuSOLVER eigen/singular values; docs/cuda.md) implements the same
// operations, and the primitive kernels (kernel_ops.hpp) the streamed engine's VJP chain is written in
// (matrix_free/device_chain.hpp: streamed mode, matrix-free Lanczos and Hutchinson); the forward and backward passes
// are the next to move behind it.
// A run has one backend (each configuration of a compare or sweep one): RunBackend below, made from the parsed
// --device and handed down to the engine choice (its free memory and GEMM rate), the context and the analyses.
#pragma once
#include <exception>
#include <functional>
#include <memory>
#include <string>

#include "gradflow/kernels/kernel_ops.hpp"
#include "gradflow/core/jacobian.hpp"
#include "gradflow/core/types.hpp"

namespace gradflow {

enum class BackendKind { Cpu, Cuda };
const char* to_string(BackendKind k);  // "cpu" | "cuda"
// --device TEXT ("cpu" | "cuda"), the one place the option becomes the enum; Error (exit code 2) otherwise.
BackendKind parse_backend_kind(const std::string& device);

// A dense (rows, cols) float64 matrix owned by a backend.
class DenseBuffer {
 public:
  virtual ~DenseBuffer() = default;
  virtual Index rows() const = 0;
  virtual Index cols() const = 0;
  virtual Mat to_host() const = 0;  // a copy in host memory (the CPU backend's is a plain copy)
  // The matrix itself when it lives in host memory (the CPU backend's), without a copy; null for a device's.
  virtual const Mat* host_view() const { return nullptr; }
};

// How far a square A is from the identity: ‖A − I‖₂ (Lanczos) and ‖A − I‖_F (overflow-safe).
struct IdentityDistance {
  double spectral = 0, frobenius = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  // One line for reports and progress: "cpu", or the device, its memory and compute capability.
  virtual std::string description() const = 0;
  // True when its buffers are host matrices and its arithmetic the host's own float64 (OpenBLAS/LAPACK/Eigen, what
  // the model's own code runs): an engine may then compute on host copies with those libraries, several layers at
  // once on the host's threads, and run the model's own VJPs/JVPs, and get this backend's numbers. False for a
  // device: its buffers are computed on where they live, and the chains run in its kernels.
  virtual bool on_host() const = 0;
  // Error (exit code 2) naming `what`, its size, the free memory and a fix, when `bytes` do not fit in the memory
  // the buffers live in (the device's; the CPU backend's host memory is choose_engine's estimate, engine.hpp).
  virtual void require_memory(double bytes, const std::string& what) const = 0;
  // Bytes free in the memory the buffers live in (the device's); +∞ for the CPU backend (host memory is
  // choose_engine's estimate against --max-memory).
  virtual double free_memory() const = 0;
  // The double-precision GEMM rate (flop/s) of this backend's products, measured on the first call and remembered
  // for the rest of the process: the host's DGEMM (host_dgemm_rate) for the CPU, the device's through its kernels
  // (gemm_rate_of_kernels at (4096, 4096)) for a device. What --mode auto weighs streamed mode by (engine.hpp).
  virtual double gemm_rate() const = 0;
  virtual std::unique_ptr<DenseBuffer> upload(Mat host) const = 0;
  // The product walk's step: P·B for a dense P (N, N) and a structured B (token-wise or dense); consumes P.
  virtual std::unique_ptr<DenseBuffer> multiply(std::unique_ptr<DenseBuffer> P, const Jacobian& B) const = 0;
  // B as a dense buffer; consumes B (a dense Jacobian gives up its matrix without a copy).
  virtual std::unique_ptr<DenseBuffer> densify(Jacobian&& B) const = 0;
  virtual bool all_finite(const DenseBuffer& A) const = 0;
  virtual double frobenius_norm(const DenseBuffer& A) const = 0;  // overflow-safe (linalg/svd.hpp)
  virtual double spectral_norm(const DenseBuffer& A) const = 0;   // σ_max by Lanczos (linalg/top_singular.hpp)
  // ‖A − I‖₂ and ‖A − I‖_F of a square A (one copy of A on the backend)
  virtual IdentityDistance minus_identity_norms(const DenseBuffer& A) const = 0;
  virtual Vec singular_values(const DenseBuffer& A) const = 0;    // all, descending
  // The primitive kernels the device engines are written in (kernel_ops.hpp), on this backend's memory.
  virtual const KernelOps& kernels() const = 0;
};

// The backend of that kind; Error (exit code 2) naming the build option when it was not built.
std::unique_ptr<Backend> make_backend(BackendKind kind);

// This machine's double-precision GEMM rate (flop/s) at the current thread count: the best of a few (512, 512)
// products, measured on the first call (~30 ms) and remembered for the rest of the process (the CPU backend's rate).
double host_dgemm_rate();

// The one backend of a run (of each configuration of a compare or sweep), built from the parsed --device by the
// factory on first use and then the same object for the engine choice, the context and the analyses. Built on first
// use, not up front, so that what needs no device never asks for one: options refused, --gradients-only refused with
// a device, a plan written on a login node (the engine choice catches the Error and says the device was not asked).
// A failed build is not tried again: get() rethrows its Error. Not shared between threads.
class RunBackend {
 public:
  using Factory = std::function<std::unique_ptr<Backend>(BackendKind)>;
  explicit RunBackend(BackendKind kind, Factory make = make_backend);
  BackendKind kind() const { return kind_; }  // the option, known without building
  std::shared_ptr<const Backend> get() const;

 private:
  BackendKind kind_;
  Factory make_;
  mutable std::shared_ptr<const Backend> backend_;
  mutable std::exception_ptr failed_;
};

// The GEMM rate (flop/s) of a backend's kernels: the best of `repeats` (size, size) products through
// KernelOps::gemm after one warm-up, each timed to the return of a reduction over its result (which waits for the
// device); Error if the product's result is wrong.
double gemm_rate_of_kernels(const KernelOps& ops, Index size, int repeats = 3);

}  // namespace gradflow
