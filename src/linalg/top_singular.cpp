// top_singular.cpp — Lanczos on AᵀA through Spectra (see top_singular.hpp).
#include "gradflow/linalg/top_singular.hpp"

#include <Spectra/SymEigsSolver.h>

#include <algorithm>
#include <cmath>

#include "gradflow/linalg/svd.hpp"

namespace gradflow {
namespace {

// The operator AᵀA in Spectra's interface.
class NormalOperator {
 public:
  using Scalar = double;
  NormalOperator(const LinearMap& A, const LinearMap& At, Index rows, Index cols)
      : A_(A), At_(At), cols_(cols), tmp_(rows) {}
  Index rows() const { return cols_; }
  Index cols() const { return cols_; }
  void perform_op(const double* x, double* y) const {
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
  eigs.compute(Spectra::SortRule::LargestAlge, max_restarts, tol);
  out.converged = eigs.info() == Spectra::CompInfo::Successful;
  out.iterations = eigs.num_iterations();
  out.operations = eigs.num_operations();
  if (out.converged) out.values = eigs.eigenvalues().cwiseMax(0.0).cwiseSqrt();
  return out;
}

double spectral_norm(const Mat& A) {
  if (A.size() == 0) return 0.0;
  if (A.cwiseAbs().maxCoeff() == 0.0) return 0.0;
  const LinearMap f = [&](const double* x, double* y) {
    Eigen::Map<Vec>(y, A.rows()).noalias() = A * Eigen::Map<const Vec>(x, A.cols());
  };
  const LinearMap ft = [&](const double* x, double* y) {
    Eigen::Map<Vec>(y, A.cols()).noalias() = A.transpose() * Eigen::Map<const Vec>(x, A.rows());
  };
  const TopSingular t = top_singular_values(f, ft, A.rows(), A.cols(), 1);
  if (t.converged) return t.values(0);
  return singular_values(A)(0);
}

}  // namespace gradflow
