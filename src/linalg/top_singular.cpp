// top_singular.cpp — Lanczos on AᵀA through Spectra (see top_singular.hpp).
#include "gradflow/linalg/top_singular.hpp"

#include <Spectra/SymEigsSolver.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gradflow/core/cancel.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/core/finite.hpp"
#include "gradflow/linalg/svd.hpp"

namespace gradflow {
namespace {

// spectral_norm runs Lanczos on A itself while max|A| lies in this range (its squares and sums of squares stay
// far from under- and overflow), else on A scaled by a power of two.
constexpr double kUnscaledMin = 1e-100, kUnscaledMax = 1e100;

// The operator AᵀA in Spectra's interface. Its results, and those of Spectra's own vector algebra (BLAS gemv and gemm
// with its Krylov basis), do not depend on the thread count: src/linalg/blas_threads.cpp (found here first: OpenBLAS
// split a tall transposed gemv's sums between threads, and matrix-free σ at N = 1024 moved by ~1e-15 relative
// between 1 and 2 threads; tests/linalg/test_top_singular.cpp).
class NormalOperator {
 public:
  using Scalar = double;
  NormalOperator(const LinearMap& A, const LinearMap& At, Index rows, Index cols)
      : A_(A), At_(At), cols_(cols), tmp_(rows) {}
  Index rows() const { return cols_; }
  Index cols() const { return cols_; }
  void perform_op(const double* x, double* y) const {
    check_cancel();  // a front end asked to stop (core/cancel.hpp): between Lanczos steps
    A_(x, tmp_.data());
    At_(tmp_.data(), y);
  }

 private:
  const LinearMap& A_;
  const LinearMap& At_;
  Index cols_;
  mutable Vec tmp_;
};

}  // namespace

TopSingular top_singular_values(const LinearMap& A, const LinearMap& At, Index rows, Index cols, Index k, double tol,
                                Index max_restarts) {
  TopSingular out;
  NormalOperator op(A, At, rows, cols);
  k = std::min(k, cols);
  if (cols <= 2 || k >= cols - 1) {  // too small for Lanczos: form AᵀA densely from the maps
    Mat M(cols, cols);
    Vec e = Vec::Zero(cols), y(cols);
    for (Index j = 0; j < cols; ++j) {
      e(j) = 1.0;
      op.perform_op(e.data(), y.data());
      M.col(j) = y;
      e(j) = 0.0;
    }
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es((M + M.transpose()) / 2, Eigen::EigenvaluesOnly);
    const Vec ev = es.eigenvalues().reverse();
    out.values = ev.head(k).cwiseMax(0.0).cwiseSqrt();
    out.converged = true;
    out.operations = cols;
    return out;
  }
  const Index ncv = std::min(cols, std::max<Index>(2 * k + 1, 20));
  Spectra::SymEigsSolver<NormalOperator> eigs(op, k, ncv);
  eigs.init();
  try {
    eigs.compute(Spectra::SortRule::LargestAlge, max_restarts, tol);
  } catch (const Cancelled&) {  // a runtime_error too, but not the solver's failure
    throw;
  } catch (const std::runtime_error&) {  // its tridiagonal eigensolver failed: reported as not converged
    out.converged = false;
    out.iterations = eigs.num_iterations();
    out.operations = eigs.num_operations();
    return out;
  }
  out.converged = eigs.info() == Spectra::CompInfo::Successful;
  out.iterations = eigs.num_iterations();
  out.operations = eigs.num_operations();
  if (out.converged) out.values = eigs.eigenvalues().cwiseMax(0.0).cwiseSqrt();
  return out;
}

double spectral_norm(const Mat& A) {
  if (A.size() == 0) return 0.0;
  if (!all_finite(A))
    throw Error("internal: spectral norm of a matrix holding NaN/Inf (its caller locates them first)", ErrorKind::Internal);
  const double amax = A.cwiseAbs().maxCoeff();
  if (amax == 0.0) return 0.0;
  if (amax < kUnscaledMin || amax > kUnscaledMax) {
    // AᵀA of such a matrix under- or overflows inside Lanczos (Spectra's tridiagonal solver then fails): the
    // norm of A·2^-e, e the binary exponent of max|A|, scaled back (powers of two are exact).
    int e = 0;
    std::frexp(amax, &e);
    return std::ldexp(spectral_norm(A.unaryExpr([e](double v) { return std::ldexp(v, -e); })), e);
  }
  if (A.rows() < A.cols()) return spectral_norm(Mat(A.transpose()));  // Lanczos on the smaller Gram matrix
  const LinearMap f = [&](const double* x, double* y) {
    Eigen::Map<Vec>(y, A.rows()).noalias() = A * Eigen::Map<const Vec>(x, A.cols());
  };
  const LinearMap ft = [&](const double* x, double* y) {
    Eigen::Map<Vec>(y, A.cols()).noalias() = A.transpose() * Eigen::Map<const Vec>(x, A.rows());
  };
  const TopSingular t = top_singular_values(f, ft, A.rows(), A.cols(), 1);
  // ‖A‖_F/√min(r, c) ≤ σ_max ≤ ‖A‖_F holds for every matrix: a Lanczos answer outside is wrong (Spectra's restart
  // after an exact breakdown, as on a rank-one AᵀA, returned 60.0 for σ = 1.64) and the SVD answers instead.
  const double fro = A.norm(), slack = 1e-12;
  const bool plausible = t.converged && t.values(0) <= fro * (1 + slack) &&
                         t.values(0) >= fro / std::sqrt(static_cast<double>(A.cols())) * (1 - slack);
  if (plausible) return t.values(0);
  return singular_values(A)(0);
}

}  // namespace gradflow
