// svd.hpp — singular values of dense matrices, and the quantities the reports derive from them.
// Uses LAPACK's dgesdd (from OpenBLAS) when CMake found it, else Eigen's BDCSVD; both are backward stable:
// each σ_i is exact for a matrix within ~ε·σ_max of the input, so values below ~1e-13·σ_max are noise.
#pragma once
#include "gradflow/core/types.hpp"

namespace gradflow {

// All singular values, descending.
Vec singular_values(const Mat& A);

// Numerical rank threshold: singular values at or below kRankRtol·σ_max count as zero. 1e-10 sits five
// orders of magnitude above rounding noise (~1e-15·σ_max for these sizes). LayerNorm maps each token's mean
// direction to an exact zero (below it) and its scale direction to ~ε/σ² ≈ 1e-5 (above it). docs/math.md §9.
inline constexpr double kRankRtol = 1e-10;

struct SpectrumSummary {
  double spectral_norm = 0;       // σ_max
  double frobenius_norm = 0;      // sqrt(Σ σ_i²), computed from the matrix entries
  double min_singular_value = 0;  // smallest σ above kRankRtol·σ_max
  Index numerical_rank = 0;       // how many σ lie above kRankRtol·σ_max
  Index size = 0;                 // min(rows, cols)
};
SpectrumSummary summarize_spectrum(const Vec& sigma, double frobenius);

// Frobenius norm, safe against overflow/underflow: the plain sum of squares when it is in range, Eigen's
// rescaling stableNorm otherwise.
double frobenius_norm(const Mat& A);

}  // namespace gradflow
