// cpu_backend.cpp — the CPU backend: Eigen products (routed to OpenBLAS's DGEMM), LAPACK's dgesdd for singular
// values, Spectra's Lanczos for spectral norms; exactly the computations the explicit engine always ran.
#include "backend/cpu_backend.hpp"

#include <limits>

#include "gradflow/kernels/cpu_kernels.hpp"

#include "gradflow/core/finite.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/linalg/svd.hpp"
#include "gradflow/linalg/top_singular.hpp"

namespace gradflow {
namespace {

const Mat& host(const DenseBuffer& b) { return static_cast<const CpuBuffer&>(b).mat(); }

class CpuBackend final : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::Cpu; }
  std::string description() const override { return "cpu"; }
  bool on_host() const override { return true; }
  void require_memory(double, const std::string&) const override {}  // host memory: choose_engine's estimate
  double free_memory() const override { return std::numeric_limits<double>::infinity(); }
  double gemm_rate() const override { return host_dgemm_rate(); }
  std::unique_ptr<DenseBuffer> upload(Mat m) const override { return std::make_unique<CpuBuffer>(std::move(m)); }
  std::unique_ptr<DenseBuffer> multiply(std::unique_ptr<DenseBuffer> P, const Jacobian& B) const override {
    auto& p = static_cast<CpuBuffer&>(*P);
    return upload((Jacobian::dense(std::move(p.mat()), B.tokens()) * B).to_dense());
  }
  std::unique_ptr<DenseBuffer> densify(Jacobian&& B) const override { return upload(std::move(B).to_dense()); }
  bool all_finite(const DenseBuffer& A) const override { return gradflow::all_finite(host(A)); }
  double frobenius_norm(const DenseBuffer& A) const override { return gradflow::frobenius_norm(host(A)); }
  double spectral_norm(const DenseBuffer& A) const override { return gradflow::spectral_norm(host(A)); }
  IdentityDistance minus_identity_norms(const DenseBuffer& A) const override {
    Mat AmI = host(A);
    AmI.diagonal().array() -= 1.0;
    return {gradflow::spectral_norm(AmI), gradflow::frobenius_norm(AmI)};
  }
  Vec singular_values(const DenseBuffer& A) const override { return gradflow::singular_values(host(A)); }
  const KernelOps& kernels() const override { return cpu_kernels(); }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace gradflow
