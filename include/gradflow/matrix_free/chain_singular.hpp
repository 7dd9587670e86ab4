// chain_singular.hpp — the k largest singular values of a Jacobian chain (P_l or B_l) without forming it:
// implicitly restarted Lanczos (Spectra, through linalg/top_singular.hpp) on (J/c)ᵀ(J/c), where c is a
// power of two near ‖J v₀‖ for a random unit v₀, so the eigenvalues Lanczos sees are O(1)..O(N) even when
// ‖J‖ is 1e±300; σ_i(J) = c·σ_i(J/c) exactly (scaling by 2^e is exact).
#pragma once
#include "gradflow/linalg/top_singular.hpp"
#include "gradflow/matrix_free/jacobian_chain.hpp"

namespace gradflow {

// Spectra's tolerance on the Ritz residuals of JᵀJ: ‖r‖ ≤ tol·λ, so |Δλ| ≤ tol·λ (symmetric: never worse than the
// residual) and σ = √λ is within tol/2 relative even when σ_1 ≈ σ_2 (~tol² relative with a spectral gap).
inline constexpr double kChainLanczosTol = 1e-9;

struct ChainSingular {
  Vec values;          // k largest σ of J, descending (empty when Lanczos did not converge)
  Vec log10_values;    // log10 σ_i, finite even where σ_i over/underflows a double
  TopSingular solver;  // convergence: iterations (restarts), operations (products JᵀJ·x), converged
  long scale_exp2 = 0; // Lanczos ran on J / 2^scale_exp2
};

ChainSingular chain_top_singular(const ChainOperator& J, Index k, uint64_t seed, double tol = kChainLanczosTol);

// The k largest singular values of J − I (how far a block is from the identity, ‖B_l − I‖₂), by Lanczos on
// (J − I)ᵀ(J − I) through J·v − v and Jᵀ·u − u. Unscaled (scale_exp2 = 0): meant for single blocks, whose
// gains are O(1); a NaN/Inf stops with Error(Numeric).
// The zero operator (J v = 0 for a random v, e.g. ReZero at α = 0 where B_l = I) gives σ = 0 without Lanczos,
// which would break down on it; the same holds for chain_top_singular.
ChainSingular chain_top_singular_minus_identity(const ChainOperator& J, Index k, uint64_t seed,
                                                double tol = kChainLanczosTol);

}  // namespace gradflow
