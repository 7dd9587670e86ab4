// top_singular.hpp — the k largest singular values of an operator A given only as x ↦ A·x and u ↦ Aᵀ·u,
// by implicitly restarted Lanczos (Spectra's SymEigsSolver) on AᵀA: σ_i = sqrt(λ_i(AᵀA)).
// Serves explicit matrices (cheap spectral norms) and matrix-free products of Jacobians (JVP/VJP).
#pragma once
#include <functional>

#include "gradflow/core/types.hpp"

namespace gradflow {

struct TopSingular {
  Vec values;              // k largest singular values, descending
  bool converged = false;  // Spectra reported CompInfo::Successful
  Index iterations = 0;    // restarts
  Index operations = 0;    // applications of AᵀA (each one A·x and one Aᵀ·u)
};

using LinearMap = std::function<void(const double* in, double* out)>;

// A: cols -> rows. tol: Spectra's relative residual tolerance on the eigenpairs of AᵀA.
TopSingular top_singular_values(const LinearMap& A, const LinearMap& At, Index rows, Index cols, Index k,
                                double tol = 1e-12, Index max_restarts = 1000);

// σ_max of an explicit matrix by Lanczos, falling back to a full SVD when Lanczos does not converge.
double spectral_norm(const Mat& A);

}  // namespace gradflow
