// tolerances.hpp — every numeric tolerance of the test suite, named once.
#pragma once

namespace gradflow::test {

// Central finite differences vs analytic derivatives (relative, on the whole matrix/vector).
inline constexpr double kFdTol = 1e-6;
// Step of the central differences (error O(h^2) ~ 1e-10, roundoff O(eps/h) ~ 1e-11).
inline constexpr double kFdStep = 1e-5;
// Two exact forms of the same derivative (J·v vs jvp(v), uᵀJ vs vjp(u)).
inline constexpr double kCrossTol = 1e-12;
// The same terms summed in another order (tests/core: structured Jacobian products vs dense ones, BLAS blocking;
// gradients accumulated over two passes vs twice one pass): a few ulps per entry; relative, on the whole matrix.
inline constexpr double kAlgebraTol = 1e-13;
// Backward-pass gradient norm vs ||P_lᵀ g|| from the explicit product of Jacobians.
inline constexpr double kProductTol = 1e-10;
// A device backend (CUDA: cuBLAS, cuSOLVER) against the CPU backend, relative on the whole result: every Backend
// operation and a whole model's explicit products (issue 12: <= 1e-10; DGEMM, Gram eigenvalues and gesvd each
// carry a few ulps times the size).
inline constexpr double kBackendTol = 1e-10;
// Singular values by a backward-stable route (dgesdd, the two-stage band route of linalg/svd.cpp) against known ones
// and against each other: absolute, in units of σ_max (each σ_i is exact for a matrix within ~n·ε·σ_max of the input;
// measured <= 5e-15 up to n = 1024).
inline constexpr double kSvdTol = 1e-13;
// Matrix-free top singular values (Lanczos on JVP/VJP) vs the explicit SVD, relative (issue 5's bound).
inline constexpr double kLanczosTol = 1e-8;
// Hutchinson Frobenius estimates: every one within this many of its reported standard errors of the exact value.
inline constexpr double kHutchinsonMaxZ = 4.0;

// Statistical checks of the RNG streams (tests/core, fixed seeds, so deterministic): a sample mean, variance or
// correlation within this many standard errors of its exact value (a fair stream fails 5 sigma with p < 1e-6).
inline constexpr double kRngMaxZ = 5.0;

// Training (tests/train): a trained copy model's final eval loss above the task floor (issue 8's learning test).
// Output sensitivity at relative size r = 1e-4: ‖y(θ+δ) − y(θ)‖² / ‖J_θ δ‖² − 1 is O(r) (second-order terms);
// measured below 1e-3 on the small test models, bounded at 1e-2.
inline constexpr double kSecondOrderTol = 1e-2;
inline constexpr double kLearnedLossMargin = 0.05;

}  // namespace gradflow::test
