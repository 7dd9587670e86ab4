// svd.hpp — singular values of dense matrices, and the quantities the reports derive from them.
// Uses LAPACK's dgesdd (from OpenBLAS) when CMake found it, else Eigen's BDCSVD; both are backward stable:
// each σ_i is exact for a matrix within ~ε·σ_max of the input, so values below ~1e-13·σ_max are noise.
#pragma once
#include "gradflow/core/types.hpp"

namespace gradflow {

// All singular values, descending. With LAPACK: dgesdd (jobz = 'N') while min(rows, cols) < kBandedSvdMin, the
// two-stage band route (singular_values_banded) from there on; both backward stable (docs/math.md §9). The rvalue
// overload works in the caller's matrix instead of a copy.
Vec singular_values(const Mat& A);
Vec singular_values(Mat&& A);

// Where the two-stage route takes over (min(rows, cols)) and its band width. Measured on one core (AMD EPYC VM,
// 2026-12-02) on a random matrix at N = 1024: dgesdd 0.165 s, banded 0.119 s (band 24; 16: 0.121, 32: 0.127,
// 48: 0.143); at N = 512 0.035 vs 0.028 s (docs/math.md §9).
inline constexpr Index kBandedSvdMin = 512;
inline constexpr Index kSvdBand = 24;

#ifdef GRADFLOW_HAVE_LAPACK
// LAPACK's dgesdd without vectors: bidiagonalization (dgebrd, half of it matrix-vector products) and dqds.
Vec singular_values_dgesdd(const Mat& A);
// Two stages: blocked QR/LQ panels (the LQ as the QR of a transposed copy) to an upper band of `band`
// superdiagonals (matrix-matrix products), dgbbrd's Givens chase to bidiagonal, dqds (dbdsqr without vectors).
// Matrices with max|a| outside [1e-100, 1e100] are scaled by a power of two first.
Vec singular_values_banded(Mat A, Index band = kSvdBand);
#endif

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
