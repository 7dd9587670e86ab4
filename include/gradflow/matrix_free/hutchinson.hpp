// hutchinson.hpp — Frobenius norms of Jacobians from random probes (Hutchinson 1990):
//   ‖A‖_F² = tr(A Aᵀ) = E_z ‖Aᵀ z‖²   for z with iid entries of mean 0 and variance 1.
// Probes are Rademacher (±1): one sample's variance is 2(‖AAᵀ‖_F² − Σ_i (AAᵀ)_ii²), never more than the
// Gaussian's 2‖AAᵀ‖_F² (Rademacher is the minimum-variance choice among iid probes; Hutchinson 1990).
// All K probes of P_l = dy/dx_l travel down in ONE batched backward sweep: Z (K·n, d) through the head and
// blocks L−1..0, so after block l the stack holds P_lᵀZ; B_l gets its own K fresh probes at block l only.
#pragma once
#include <functional>
#include <vector>

#include "gradflow/matrix_free/jacobian_chain.hpp"

namespace gradflow {

struct FrobeniusEstimate {
  double value = 0;         // sqrt(mean_i ‖Aᵀz_i‖²)
  double std_error = 0;     // SE(mean)/(2·value) (delta method), SE(mean) = sqrt(2·T̂/K); NaN for K = 1
  double log10_value = 0;   // log10 of value, finite even when value over/underflows a double
  Index probes = 0;
};

// The estimate from a stack of K probe images w_i = Aᵀz_i, (K·n, d), whose value is 2^exp2 · stack.
// Standard error: Var‖Aᵀz‖² = 2(‖AAᵀ‖_F² − Σ_j (AAᵀ)_jj²) for Rademacher z, ≤ 2‖AAᵀ‖_F² = 2T (Gaussian's exactly).
// T is estimated without bias from the K(K−1)/2 pairs, E(w_i·w_j)² = T for i ≠ j, so the reported error is an
// upper bound for Rademacher probes, tight when the singular vectors are spread over many coordinates. (The plain
// sample variance of the K norms is too small exactly when the estimate is too small, a skewed-sample effect:
// tests/matrix_free/test_hutchinson.cpp measures both tails.)
FrobeniusEstimate frobenius_from_probes(const Mat& stack, Index n, long exp2);
// The same from the probe images' (K, K) Gram matrix G_ij = w_i·w_j (value 2^(2·exp2)·G), wherever it was computed
// (DeviceChain::gram on a device).
FrobeniusEstimate frobenius_from_gram(const Mat& G, long exp2);

// (rows, cols) of iid ±1, from the seeded stream `stream`.
Mat rademacher(uint64_t seed, const std::string& stream, Index rows, Index cols);

struct HutchinsonSweep {
  std::vector<FrobeniusEstimate> product;  // ‖P_l‖_F, l = 0..L−1
  std::vector<FrobeniusEstimate> block;    // ‖B_l‖_F, l = 0..L−1 (empty unless asked)
};

// K probes; with_blocks adds the B_l estimates. after_block(l) is called as the sweep leaves block l.
HutchinsonSweep hutchinson_frobenius(const Model& model, const Trace& trace, Index K, uint64_t seed, bool with_blocks,
                                     const std::function<void(Index)>& after_block = {});

class DeviceChain;
// The same sweep on a DeviceChain's kernels (--mode matrix-free --device cuda): the same probes, uploaded once per
// stack; the stacks stay on the device and only each one's (K, K) Gram matrix comes back. The chain must hold K
// copies (its max_copies).
HutchinsonSweep hutchinson_frobenius(DeviceChain& chain, Index K, uint64_t seed, bool with_blocks,
                                     const std::function<void(Index)>& after_block = {});

}  // namespace gradflow
