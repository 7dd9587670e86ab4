// tolerances.hpp — every numeric tolerance of the test suite, named once.
#pragma once

namespace gradflow::test {

// Central finite differences vs analytic derivatives (relative, on the whole matrix/vector).
inline constexpr double kFdTol = 1e-6;
// Step of the central differences (error O(h^2) ~ 1e-10, roundoff O(eps/h) ~ 1e-11).
inline constexpr double kFdStep = 1e-5;
// Step of the four-point stencil (derivative_checks.hpp: Stencil::FourPoint) on smooth maps (GELU, no ReLU): its
// truncation O(h⁴) and rounding O(ε/h) balance near h ~ ε^(1/5) ~ 1e-3. Not with ReLU: a kink within 2h of an
// entry spoils any stencil (measured: the model's parameter JVP at this step errs up to 0.13).
inline constexpr double kFdStepSmooth = 1e-3;
// Two exact forms of the same derivative (J·v vs jvp(v), uᵀJ vs vjp(u)).
inline constexpr double kCrossTol = 1e-12;
// The same terms summed in another order (tests/core: structured Jacobian products vs dense ones, BLAS blocking;
// gradients accumulated over two passes vs twice one pass; tests/model: a placement's block against its forward
// written out by hand, Admin's profiled ω against the profiling pass by hand): a few ulps per entry; relative, on
// the whole matrix.
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
// σ_max by Lanczos on the Gram matrix (linalg/top_singular.cpp: spectral_norm, what reports call spectral_norm)
// vs the SVD's σ_max, relative: run to convergence, the Ritz value is exact to rounding (kLanczosTol is the looser
// bound of the matrix-free top values, which stop at a requested tolerance).
inline constexpr double kSpectralNormTol = 1e-12;
// Singular values that are 0 in exact arithmetic (LayerNorm's mean direction) or far below rounding (δ⁴, below),
// relative to σ_max: rounding level.
inline constexpr double kZeroSingularTol = 1e-14;
// LayerNorm attenuates a token's scale direction by δ = eps/(var + eps) ~ 1e-5 (measured 2e-6 .. 1e-5 on the test
// models; docs/math.md §9), k LayerNorms in series by ~δ^k. Relative to σ_max, the bounds that separate rounding
// (<= kZeroSingularTol), δ² (4e-12 .. 1e-10), δ and an unattenuated singular value, each orders of magnitude from
// both sides (tests/run/test_analysis.cpp; tests/ops/test_norms.cpp for the unattenuated floor).
inline constexpr double kLnDeltaSquaredFloor = 1e-13;  // δ² > this > rounding
inline constexpr double kLnDeltaFloor = 1e-8;          // δ > this > δ²
inline constexpr double kUnattenuatedFloor = 1e-3;     // an unattenuated σ > this > δ
// Hutchinson Frobenius estimates: every one within this many of its reported standard errors of the exact value.
inline constexpr double kHutchinsonMaxZ = 4.0;

// A value of a few floating-point operations (a closed form, a softmax row's sum, a ratio of two reported numbers)
// against its exact value, written out or recomputed: a few ulps (ε = 2.2e-16, so 1e-15 is ~4.5 ulps); relative
// (absolute on O(1) values).
inline constexpr double kClosedFormTol = 1e-15;
// The same through a longer chain: a log-sum-exp, log10 of 2^2000, exp far in gelu-tanh's tail, a second Adam
// update, an entropy summed over the states, Lanczos on the identity: tens of ulps; relative (absolute on O(1)).
inline constexpr double kClosedFormChainTol = 1e-14;
// The same operations as the hand expression in the same order, on O(1) values in [0.25, 2): absolute, below one
// ulp there (1.1e-16 .. 2.2e-16), so the very same double; written as a bound so a failure prints the difference.
inline constexpr double kSameDoubleTol = 1e-16;
// A derivative that is 0 in exact arithmetic (HybridNorm's key-norm bias: β_k adds q_i·β_k/√e to every score of
// query i alike, which the softmax cancels), absolute on O(1) losses: the analytic gradient is rounding ...
inline constexpr double kZeroGradTol = 1e-12;
// ... and its central differences, of a constant loss L: rounding of L over the step, ~ε·|L|/kFdStep ≈ 1e-11·|L|.
inline constexpr double kFdZeroTol = 1e-8;

// Statistical checks of the RNG streams (tests/core, fixed seeds, so deterministic): a sample mean, variance or
// correlation within this many standard errors of its exact value (a fair stream fails 5 sigma with p < 1e-6).
inline constexpr double kRngMaxZ = 5.0;

// Initialization statistics (tests/run/test_analysis.cpp, fixed seeds, so deterministic): the variance or standard
// deviation of one initialized weight matrix (N >= 4096 entries) within this fraction of the scheme's value; the
// relative standard error is <= 1.4 % there (uniform variance: sqrt(0.8/N); normal std: 1/sqrt(2N)), so >= 3.5 of
// them, while a wrong fan-in or scale moves it by far more (a factor 2 in d: 100 %).
inline constexpr double kInitMomentTol = 0.05;

// Training (tests/train): a trained copy model's final eval loss above the task floor (issue 8's learning test).
// Output sensitivity at relative size r = 1e-4: ‖y(θ+δ) − y(θ)‖² / ‖J_θ δ‖² − 1 is O(r) (second-order terms);
// measured below 1e-3 on the small test models, bounded at 1e-2.
inline constexpr double kSecondOrderTol = 1e-2;
inline constexpr double kLearnedLossMargin = 0.05;
// Distribution quantiles by bisection (experiments/statistics.hpp) against values computed at 30 digits (mpmath):
// relative; the bisection stops at 4 ulps of the bracket, the incomplete beta's continued fraction at 1e-16 per step.
inline constexpr double kQuantileTol = 1e-12;
// Coverage of a 95 % interval over 1000 seeded trials: at least this fraction (the binomial sd of a true 95 % is
// 0.7 %, so 93 % is ~3 sd below it; a z interval at n = 10 covers ~92 %, so the t interval's factor is what passes).
inline constexpr double kMinCoverage95 = 0.93;

}  // namespace gradflow::test
