// cuda_backend.cpp — the CUDA backend: buffers in device memory, cuBLAS DGEMM for the product walk, cuBLAS norms,
// cuSOLVER for eigenvalues and singular values. Everything in fp64 on the default stream (so every call below is
// ordered after the previous one; the copies back to the host synchronize).
//
// Layout. A DenseBuffer holds a row-major (rows, cols) matrix: exactly the bytes of gradflow's Mat (types.hpp).
// cuBLAS and cuSOLVER are column-major: the same bytes are the column-major (cols, rows) matrix Aᵀ with leading
// dimension cols. Every call below is written on those transposes, by the identities
//   R = P·B (row-major)  <=>  Rᵀ = Bᵀ·Pᵀ (column-major: gemm(N, N) with m = cols(B), n = rows(P), k = cols(P));
//   σ_i(A) = σ_i(Aᵀ),  ‖A‖_F = ‖Aᵀ‖_F,  diag(A) = diag(Aᵀ),  AᵀA = X·Xᵀ for X = Aᵀ.
//
// Range. As on the CPU (linalg/top_singular.cpp), norms and spectra are computed on the matrix itself while
// max|a_ij| lies in [1e-100, 1e100] (no square or sum of squares under- or overflows there), else on a copy scaled by
// 2^-e (e the binary exponent of max|a_ij|; powers of two scale exactly) and scaled back.
//
// Memory. Every allocation first checks cudaMemGetInfo and refuses (Error, exit code 2) with the sizes and a fix;
// require_memory lets the explicit walk refuse before it starts (run/context.cpp).
#include "backend/cuda/cuda_backend.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/cuda_check.hpp"
#include "backend/cuda/cuda_kernel_ops.hpp"
#include "backend/cuda/device_memory.hpp"
#include "backend/cuda/kernels.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/core/format_bytes.hpp"

namespace gradflow {
namespace {

using cuda::check;
using cuda::device_alloc;
using cuda::DevicePtr;
using cuda::fetch;
using cuda::refuse_memory;

constexpr double kUnscaledMin = 1e-100, kUnscaledMax = 1e100;  // as linalg/top_singular.cpp

// A row-major (rows, cols) matrix in device memory.
class CudaBuffer final : public DenseBuffer {
 public:
  CudaBuffer(Index rows, Index cols, const std::string& what)
      : rows_(rows), cols_(cols), data_(device_alloc<double>(static_cast<size_t>(rows * cols), what)) {}
  Index rows() const override { return rows_; }
  Index cols() const override { return cols_; }
  Mat to_host() const override {
    Mat m(rows_, cols_);
    if (m.size() > 0)
      check(cudaMemcpy(m.data(), data(), bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy (device to host)");
    return m;
  }
  int64_t count() const { return static_cast<int64_t>(rows_ * cols_); }
  size_t bytes() const { return static_cast<size_t>(count()) * sizeof(double); }
  double* data() { return data_.get(); }
  const double* data() const { return data_.get(); }

 private:
  Index rows_, cols_;
  DevicePtr<double> data_;
};

const CudaBuffer& dev(const DenseBuffer& b) {
  const auto* p = dynamic_cast<const CudaBuffer*>(&b);
  if (!p) throw Error("internal: a host buffer was given to the CUDA backend", ErrorKind::Internal);
  return *p;
}

std::string shape(Index r, Index c) { return "(" + std::to_string(r) + ", " + std::to_string(c) + ")"; }

struct BlasDestroy {
  void operator()(std::remove_pointer_t<cublasHandle_t>* h) const noexcept { cuda::api().cublasDestroy(h); }
};
struct SolverDestroy {
  void operator()(std::remove_pointer_t<cusolverDnHandle_t>* h) const noexcept { cuda::api().cusolverDnDestroy(h); }
};
struct ParamsDestroy {
  void operator()(std::remove_pointer_t<cusolverDnParams_t>* p) const noexcept { cuda::api().cusolverDnDestroyParams(p); }
};

// The data a norm or spectrum is computed on: the matrix itself, or a copy scaled by 2^-e (see Range above).
struct InRange {
  const double* data = nullptr;
  int e = 0;                  // the result is scaled back by 2^e
  DevicePtr<double> scaled;  // the copy, when one was needed
};

class CudaBackend final : public Backend {
 public:
  CudaBackend() {
    cublasHandle_t b = nullptr;
    check(cuda::api().cublasCreate(&b), "cublasCreate");
    blas_.reset(b);
    cusolverDnHandle_t s = nullptr;
    check(cuda::api().cusolverDnCreate(&s), "cusolverDnCreate");
    solver_.reset(s);
    cusolverDnParams_t p = nullptr;
    check(cuda::api().cusolverDnCreateParams(&p), "cusolverDnCreateParams");
    params_.reset(p);
    kernels_ = make_cuda_kernel_ops(b);
  }

  const KernelOps& kernels() const override { return *kernels_; }

  BackendKind kind() const override { return BackendKind::Cuda; }
  bool on_host() const override { return false; }

  std::string description() const override {
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    return "cuda:" + std::to_string(device) + " " + prop.name + " (" +
           format_bytes(static_cast<double>(prop.totalGlobalMem)) + ", compute capability " +
           std::to_string(prop.major) + "." + std::to_string(prop.minor) + ")";
  }

  void require_memory(double bytes, const std::string& what) const override {
    size_t free_b = 0, total_b = 0;
    check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    if (bytes > static_cast<double>(free_b)) refuse_memory(what, bytes, free_b, total_b);
  }

  double free_memory() const override {
    size_t free_b = 0, total_b = 0;
    check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    return static_cast<double>(free_b);
  }

  double gemm_rate() const override {
    static const double rate = gemm_rate_of_kernels(*kernels_, 4096);  // once per process (~0.1 s)
    return rate;
  }

  std::unique_ptr<DenseBuffer> upload(Mat host) const override { return dev_copy_of(host, "a Jacobian"); }

  std::unique_ptr<DenseBuffer> multiply(std::unique_ptr<DenseBuffer> P, const Jacobian& B) const override {
    const CudaBuffer& p = dev(*P);
    const Index r = p.rows(), k = B.rows(), c = B.cols();
    if (p.cols() != k)
      throw Error("internal: P" + shape(r, p.cols()) + "·B" + shape(k, c) + " does not conform", ErrorKind::Internal);
    auto R = std::make_unique<CudaBuffer>(r, c, "the product P_l = P_{l+1}·B_l of " + shape(r, c));
    const double one = 1.0, zero = 0.0;
    if (B.is_tokenwise()) {
      // B = blockdiag(B_0 .. B_{n-1}), each B_i (d_out, d_in). Column block i of R = P·B (width d_in) is column block
      // i of P (width d_out) times B_i. Column-major: row block i of Rᵀ (d_in rows, ld c, at R + i·d_in) is
      // B_iᵀ · (row block i of Pᵀ: d_out rows, ld k, at P + i·d_out), with B_iᵀ the column-major (d_in, d_out)
      // reading of the row-major B_i (ld d_in). One strided batch over the n tokens; the output blocks are disjoint.
      const Index n = B.tokens(), d_out = B.d_out(), d_in = B.d_in(), bsize = d_out * d_in;
      std::vector<double> packed(static_cast<size_t>(n * bsize));
      for (Index i = 0; i < n; ++i)
        std::memcpy(packed.data() + i * bsize, B.blocks()[static_cast<size_t>(i)].data(), bsize * sizeof(double));
      auto blocks = device_alloc<double>(packed.size(), "the token-wise blocks of B_l");
      check(cudaMemcpy(blocks.get(), packed.data(), packed.size() * sizeof(double), cudaMemcpyHostToDevice),
            "cudaMemcpy (host to device)");
      check(cuda::api().cublasDgemmStridedBatched_64(blas(), CUBLAS_OP_N, CUBLAS_OP_N, d_in, r, d_out, &one, blocks.get(), d_in,
                                         bsize, p.data(), k, d_out, &zero, R->data(), c, d_in, n),
            "cublasDgemmStridedBatched");
    } else {
      // Rᵀ (c, r) = Bᵀ (c, k; the row-major B read column-major, ld c) · Pᵀ (k, r; ld k)
      auto Bd = dev_copy_of(B.matrix(), "the dense B_l");
      check(cuda::api().cublasDgemm_64(blas(), CUBLAS_OP_N, CUBLAS_OP_N, c, r, k, &one, Bd->data(), c, p.data(), k, &zero,
                           R->data(), c),
            "cublasDgemm");
    }
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (after the product)");  // surfaces a failed GEMM here
    P.reset();  // consumed
    return R;
  }

  std::unique_ptr<DenseBuffer> densify(Jacobian&& B) const override {
    if (!B.is_tokenwise()) return upload(std::move(B).to_dense());
    // block i (d_out, d_in, row-major, pitch d_in) lands at rows i·d_out, columns i·d_in of the zeroed (N_out, N_in)
    const Index n = B.tokens(), d_out = B.d_out(), d_in = B.d_in();
    auto D = std::make_unique<CudaBuffer>(B.rows(), B.cols(), "the dense B_l of " + shape(B.rows(), B.cols()));
    check(cudaMemset(D->data(), 0, D->bytes()), "cudaMemset");
    const size_t pitch = static_cast<size_t>(B.cols()) * sizeof(double), row = static_cast<size_t>(d_in) * sizeof(double);
    for (Index i = 0; i < n; ++i)
      check(cudaMemcpy2D(D->data() + i * d_out * B.cols() + i * d_in, pitch, B.blocks()[static_cast<size_t>(i)].data(),
                         row, row, static_cast<size_t>(d_out), cudaMemcpyHostToDevice),
            "cudaMemcpy2D (host to device)");
    return D;
  }

  bool all_finite(const DenseBuffer& A) const override {
    const CudaBuffer& a = dev(A);
    auto flag = device_alloc<int>(1, "a flag");
    check(cudaMemset(flag.get(), 0, sizeof(int)), "cudaMemset");
    check(cuda::launch_flag_nonfinite(a.data(), a.count(), flag.get()), "launch_flag_nonfinite");
    return fetch(flag.get()) == 0;
  }

  double frobenius_norm(const DenseBuffer& A) const override {
    const CudaBuffer& a = dev(A);
    if (a.count() == 0) return 0.0;
    const double amax = abs_max(a.data(), a.count());
    if (amax == 0.0 || !std::isfinite(amax)) return amax;
    const InRange s = in_range(a, amax, false);
    double r = 0;
    check(cuda::api().cublasDnrm2_64(blas(), a.count(), s.data, 1, &r), "cublasDnrm2");
    return std::ldexp(r, s.e);
  }

  double spectral_norm(const DenseBuffer& A) const override {
    const CudaBuffer& a = dev(A);
    if (a.count() == 0) return 0.0;
    const double amax = abs_max(a.data(), a.count());
    if (amax == 0.0) return 0.0;
    if (!std::isfinite(amax))
      throw Error("internal: spectral norm of a matrix holding NaN/Inf (its caller locates them first)", ErrorKind::Internal);
    const InRange s = in_range(a, amax, false);
    return std::ldexp(sigma_max(s.data, a.rows(), a.cols()), s.e);
  }

  IdentityDistance minus_identity_norms(const DenseBuffer& A) const override {
    const CudaBuffer& a = dev(A);
    if (a.rows() != a.cols())
      throw Error("internal: ‖A − I‖₂ of a non-square " + shape(a.rows(), a.cols()), ErrorKind::Internal);
    CudaBuffer AmI(a.rows(), a.cols(), "A − I of " + shape(a.rows(), a.cols()));
    check(cudaMemcpy(AmI.data(), a.data(), a.bytes(), cudaMemcpyDeviceToDevice), "cudaMemcpy (device to device)");
    check(cuda::launch_add_to_diagonal(AmI.data(), a.rows(), a.cols(), -1.0), "launch_add_to_diagonal");
    return {spectral_norm(AmI), frobenius_norm(AmI)};
  }

  Vec singular_values(const DenseBuffer& A) const override {
    const CudaBuffer& a = dev(A);
    const Index r = a.rows(), c = a.cols(), kmin = std::min(r, c);
    if (kmin == 0) return Vec();
    const double amax = abs_max(a.data(), a.count());
    if (amax == 0.0) return Vec::Zero(kmin);
    if (!std::isfinite(amax))
      throw Error("internal: singular values of a matrix holding NaN/Inf (its caller locates them first)", ErrorKind::Internal);
    // gesvd overwrites its input and needs m >= n. The bytes of A are the column-major X = Aᵀ (c, r): copied as they
    // are when c >= r, else transposed by geam into the column-major A (r, c) (ld r).
    auto W = device_alloc<double>(static_cast<size_t>(a.count()), "the SVD's copy of " + shape(r, c));
    int64_t m = c, n = r;
    if (c >= r) {
      check(cudaMemcpy(W.get(), a.data(), a.bytes(), cudaMemcpyDeviceToDevice), "cudaMemcpy (device to device)");
    } else {
      const double one = 1.0, zero = 0.0;
      check(cudaMemset(W.get(), 0, a.bytes()), "cudaMemset");  // C is B below: defined even if 0·B were formed
      // C (r, c; ld r) = 1·Xᵀ + 0·C, X (c, r; ld c); beta = 0 with B = C in place (transb = N, ldb = ldc)
      check(cuda::api().cublasDgeam_64(blas(), CUBLAS_OP_T, CUBLAS_OP_N, r, c, &one, a.data(), c, &zero, W.get(), r, W.get(), r),
            "cublasDgeam");
      m = r;
      n = c;
    }
    int e = 0;
    if (amax < kUnscaledMin || amax > kUnscaledMax) {
      std::frexp(amax, &e);
      const double s = std::ldexp(1.0, -e);
      check(cuda::api().cublasDscal_64(blas(), a.count(), &s, W.get(), 1), "cublasDscal");
    }
    auto S = device_alloc<double>(static_cast<size_t>(n), "the singular values");
    auto info = device_alloc<int>(1, "cuSOLVER's info");
    size_t dbytes = 0, hbytes = 0;
    check(cuda::api().cusolverDnXgesvd_bufferSize(solver(), params(), 'N', 'N', m, n, CUDA_R_64F, W.get(), m, CUDA_R_64F, S.get(),
                                      CUDA_R_64F, nullptr, m, CUDA_R_64F, nullptr, n, CUDA_R_64F, &dbytes, &hbytes),
          "cusolverDnXgesvd_bufferSize");
    auto dwork = device_alloc<char>(dbytes, "cuSOLVER gesvd's workspace");
    std::vector<char> hwork(std::max<size_t>(hbytes, 1));
    check(cuda::api().cusolverDnXgesvd(solver(), params(), 'N', 'N', m, n, CUDA_R_64F, W.get(), m, CUDA_R_64F, S.get(), CUDA_R_64F,
                           nullptr, m, CUDA_R_64F, nullptr, n, CUDA_R_64F, dwork.get(), dbytes, hwork.data(), hbytes,
                           info.get()),
          "cusolverDnXgesvd");
    const int status = fetch(info.get());
    if (status != 0)
      throw Error("--device cuda: cusolverDnXgesvd of " + shape(r, c) + " returned info = " + std::to_string(status) +
                      (status > 0 ? " (the bidiagonal QR iteration did not converge)" : " (an invalid argument)") +
                      "; fix: use --device cpu (LAPACK's dgesdd) for this run",
                  status > 0 ? ErrorKind::Numeric : ErrorKind::Internal);
    Vec sigma(n);  // descending, as LAPACK's
    check(cudaMemcpy(sigma.data(), S.get(), static_cast<size_t>(n) * sizeof(double), cudaMemcpyDeviceToHost),
          "cudaMemcpy (device to host)");
    if (e != 0)
      for (Index i = 0; i < n; ++i) sigma(i) = std::ldexp(sigma(i), e);
    return sigma;
  }

 private:
  cublasHandle_t blas() const { return blas_.get(); }
  cusolverDnHandle_t solver() const { return solver_.get(); }
  cusolverDnParams_t params() const { return params_.get(); }

  std::unique_ptr<CudaBuffer> dev_copy_of(const Mat& host, const std::string& what) const {
    auto buf = std::make_unique<CudaBuffer>(host.rows(), host.cols(), what + " of " + shape(host.rows(), host.cols()));
    if (host.size() > 0)
      check(cudaMemcpy(buf->data(), host.data(), buf->bytes(), cudaMemcpyHostToDevice), "cudaMemcpy (host to device)");
    return buf;
  }

  // max |x_i| (cuBLAS Idamax: the 1-based index of the first largest |x_i|); NaN/Inf come back as they are
  double abs_max(const double* x, int64_t count) const {
    int64_t idx = 0;
    check(cuda::api().cublasIdamax_64(blas(), count, x, 1, &idx), "cublasIdamax");
    if (idx < 1 || idx > count) throw Error("internal: cublasIdamax returned index " + std::to_string(idx), ErrorKind::Internal);
    return std::fabs(fetch(x + (idx - 1)));
  }

  InRange in_range(const CudaBuffer& a, double amax, bool always_copy) const {
    InRange s;
    s.data = a.data();
    const bool scale = amax < kUnscaledMin || amax > kUnscaledMax;
    if (!scale && !always_copy) return s;
    s.scaled = device_alloc<double>(static_cast<size_t>(a.count()), "a scaled copy of " + shape(a.rows(), a.cols()));
    check(cudaMemcpy(s.scaled.get(), a.data(), a.bytes(), cudaMemcpyDeviceToDevice), "cudaMemcpy (device to device)");
    if (scale) {
      std::frexp(amax, &s.e);
      const double f = std::ldexp(1.0, -s.e);
      check(cuda::api().cublasDscal_64(blas(), a.count(), &f, s.scaled.get(), 1), "cublasDscal");
    }
    s.data = s.scaled.get();
    return s;
  }

  // σ_max of the row-major (r, c) matrix A at x (column-major X = Aᵀ (c, r), ld c), as the square root of the largest
  // eigenvalue of the smaller Gram matrix: AᵀA = X·Xᵀ (c, c) when c <= r, else AAᵀ = Xᵀ·X (r, r). The Gram matrix's
  // largest eigenvalue carries a relative error of a few ε (its backward error is ~ε·σ_max²), so σ_max does too; the
  // small singular values are never taken from it (singular_values runs gesvd on A itself).
  double sigma_max(const double* x, Index r, Index c) const {
    const int64_t g = std::min(r, c), k = std::max(r, c);
    auto G = device_alloc<double>(static_cast<size_t>(g * g), "the Gram matrix " + shape(g, g) + " of a spectral norm");
    const double one = 1.0, zero = 0.0;
    // syrk: G = op(X)·op(X)ᵀ with op(X) (g, k): op = N for X (c, r) when c <= r, op = T (Xᵀ (r, c)) otherwise
    check(cuda::api().cublasDsyrk_64(blas(), CUBLAS_FILL_MODE_LOWER, c <= r ? CUBLAS_OP_N : CUBLAS_OP_T, g, k, &one, x, c, &zero,
                         G.get(), g),
          "cublasDsyrk");
    auto w = device_alloc<double>(static_cast<size_t>(g), "the Gram matrix's eigenvalues");
    auto info = device_alloc<int>(1, "cuSOLVER's info");
    size_t dbytes = 0, hbytes = 0;
    check(cuda::api().cusolverDnXsyevd_bufferSize(solver(), params(), CUSOLVER_EIG_MODE_NOVECTOR, CUBLAS_FILL_MODE_LOWER, g,
                                      CUDA_R_64F, G.get(), g, CUDA_R_64F, w.get(), CUDA_R_64F, &dbytes, &hbytes),
          "cusolverDnXsyevd_bufferSize");
    auto dwork = device_alloc<char>(dbytes, "cuSOLVER syevd's workspace");
    std::vector<char> hwork(std::max<size_t>(hbytes, 1));
    check(cuda::api().cusolverDnXsyevd(solver(), params(), CUSOLVER_EIG_MODE_NOVECTOR, CUBLAS_FILL_MODE_LOWER, g, CUDA_R_64F,
                           G.get(), g, CUDA_R_64F, w.get(), CUDA_R_64F, dwork.get(), dbytes, hwork.data(), hbytes,
                           info.get()),
          "cusolverDnXsyevd");
    const int status = fetch(info.get());
    if (status != 0)
      throw Error("--device cuda: cusolverDnXsyevd of the Gram matrix " + shape(g, g) + " returned info = " +
                      std::to_string(status) + "; fix: use --device cpu (Lanczos) for this run",
                  status > 0 ? ErrorKind::Numeric : ErrorKind::Internal);
    const double lambda_max = fetch(w.get() + (g - 1));  // ascending
    return std::sqrt(std::max(lambda_max, 0.0));
  }

  std::unique_ptr<std::remove_pointer_t<cublasHandle_t>, BlasDestroy> blas_;
  std::unique_ptr<std::remove_pointer_t<cusolverDnHandle_t>, SolverDestroy> solver_;
  std::unique_ptr<std::remove_pointer_t<cusolverDnParams_t>, ParamsDestroy> params_;
  std::unique_ptr<KernelOps> kernels_;  // uses blas_: declared after it, destroyed before it
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() {
  int count = 0;
  const cudaError_t s = cudaGetDeviceCount(&count);
  if (s != cudaSuccess || count < 1) {
    (void)cudaGetLastError();
    throw Error(std::string("--device cuda: no CUDA GPU is visible (cudaGetDeviceCount: ") +
                (s != cudaSuccess ? cudaGetErrorString(s) : "0 devices") +
                "); fix: run on a machine with an NVIDIA GPU and its driver (nvidia-smi lists it), or use --device cpu");
  }
  check(cudaSetDevice(0), "cudaSetDevice");
  return std::make_unique<CudaBackend>();
}

}  // namespace gradflow
