// hutchinson.hpp — Frobenius norms of Jacobians from random probes (Hutchinson 1990):
//   ‖A‖_F² = tr(A Aᵀ) = E_z ‖Aᵀ z‖²   for z with iid entries of mean 0 and variance 1.
// Probes are Rademacher (±1): one sample's variance is 2(‖AAᵀ‖_F² − Σ_i (AAᵀ)_ii²), never more than the
// Gaussian's 2‖AAᵀ‖_F² (Rademacher is the minimum-variance choice among iid probes; Hutchinson 1990).
// The K probes of P_l = dy/dx_l travel down in chunks of C (--probe-chunk; default 64, so the default K = 32 is one
// chunk): a chunk's stack Z (C·n, d) goes through the head and blocks L−1..0 in ONE batched backward sweep, so after
// block l the stack holds P_lᵀZ; B_l gets its own C fresh probes per chunk at block l only. Probe i is the same
// numbers whatever the chunking (its rows of the seeded stream), and each chunk leaves per layer two sums (its Gram
// matrix's diagonal sum and off-diagonal squares), added over chunks in chunk order: so a split run's tasks
// (analyze --plan) report their chunks' sums and the merge's estimate equals one process's bit for bit.
#pragma once
#include <algorithm>
#include <functional>
#include <vector>

#include "gradflow/matrix_free/jacobian_chain.hpp"
#include "gradflow/matrix_free/streamed.hpp"

namespace gradflow {

struct FrobeniusEstimate {
  double value = 0;         // sqrt(mean_i ‖Aᵀz_i‖²)
  double std_error = 0;     // SE(mean)/(2·value) (delta method), SE(mean) = sqrt(2·T̂/K); NaN without a pair
  double log10_value = 0;   // log10 of value, finite even when value over/underflows a double
  Index probes = 0;
};

// One chunk of probes' part of an estimate: from its probe images' (C, C) Gram matrix G_ij = w_i·w_j, whose value is
// 2^(2·exp2)·G, the diagonal's sum (Σ ‖w_i‖²) and the squares of the pairs i < j (Σ G_ij², value 2^(4·exp2)·that).
struct ProbeSums {
  double diag_sum = 0;
  double pair_squares = 0;
  Index probes = 0;
  long exp2 = 0;
  bool operator==(const ProbeSums& o) const {
    return diag_sum == o.diag_sum && pair_squares == o.pair_squares && probes == o.probes && exp2 == o.exp2;
  }
};
ProbeSums probe_sums(const Mat& G, long exp2);
// The same from a stack of C probe images w_i = Aᵀz_i, (C·n, d), whose value is 2^exp2 · stack.
ProbeSums probe_sums_from_stack(const Mat& stack, Index n, long exp2);

// The estimate from every chunk's sums, added in the order given at the largest chunk's scale. The mean is
// Σ diag / K. Standard error: Var‖Aᵀz‖² = 2(‖AAᵀ‖_F² − Σ_j (AAᵀ)_jj²) for Rademacher z, ≤ 2‖AAᵀ‖_F² = 2T (Gaussian's
// exactly). T is estimated without bias from the pairs within chunks, E(w_i·w_j)² = T for i ≠ j (K(K−1)/2 pairs for
// one chunk; Σ C(C−1)/2 when split: fewer pairs, the same expectation), so the reported error is an upper bound for
// Rademacher probes, tight when the singular vectors are spread over many coordinates. (The plain sample variance
// of the K norms is too small exactly when the estimate is too small, a skewed-sample effect:
// tests/matrix_free/test_hutchinson.cpp measures both tails.) NaN std_error without a pair (chunks of one probe).
FrobeniusEstimate frobenius_from_sums(const std::vector<ProbeSums>& chunks);
// One chunk: from a stack of K probe images w_i = Aᵀz_i, (K·n, d), whose value is 2^exp2 · stack; or from their
// (K, K) Gram matrix G_ij = w_i·w_j (value 2^(2·exp2)·G), wherever it was computed (DeviceChain::gram on a device).
FrobeniusEstimate frobenius_from_probes(const Mat& stack, Index n, long exp2);
FrobeniusEstimate frobenius_from_gram(const Mat& G, long exp2);

// (rows, cols) of iid ±1: rows first_row .. first_row+rows−1 of the seeded stream `stream` read as a matrix of `cols`
// columns (first_row·cols draws skipped), so any rows of one matrix are drawn alone.
Mat rademacher(uint64_t seed, const std::string& stream, Index rows, Index cols, Index first_row = 0);

// K probes in chunks of C (C >= K, or 0: one chunk): chunk c holds probes [c·C, min((c+1)·C, K)).
struct ProbeChunking {
  Index probes = 0, per_chunk = 0;
  ProbeChunking(Index K, Index C) : probes(K), per_chunk(C <= 0 || C > K ? K : C) {}
  Index chunks() const { return per_chunk > 0 ? (probes + per_chunk - 1) / per_chunk : 0; }
  Index first(Index c) const { return c * per_chunk; }
  Index count(Index c) const { return std::min(per_chunk, probes - c * per_chunk); }
};

// One chunk's record, as the sweep adds it: per layer its sums for P_l (and B_l).
struct ProbeChunk {
  Index chunk = 0;
  std::vector<ProbeSums> product, block;  // l = 0..L−1 (block empty unless asked)
};

struct HutchinsonSweep {
  std::vector<FrobeniusEstimate> product;  // ‖P_l‖_F, l = 0..L−1 (a part of a sweep: empty)
  std::vector<FrobeniusEstimate> block;    // ‖B_l‖_F, l = 0..L−1 (empty unless asked, or a part)
  std::vector<ProbeChunk> part;            // a part of a sweep: each of its chunks' record, in chunk order
};

// The whole sweep's estimates from every chunk's record (each chunk exactly once, in chunk order), added as one
// sweep adds them. Error (Internal) when a record is out of order or of another depth.
HutchinsonSweep hutchinson_from_chunks(const std::vector<ProbeChunk>& chunks, Index layers, bool with_blocks);

// K probes in chunks of per_chunk (0: one chunk); with_blocks adds the B_l estimates. after_block(l, k) is called as
// a chunk of k probes leaves block l. A part (`range` not whole: chunks [begin, end)) computes its chunks alone and
// returns their records (HutchinsonSweep::part), no estimates; Error when the range is not within the chunks.
HutchinsonSweep hutchinson_frobenius(const Model& model, const Trace& trace, Index K, uint64_t seed, bool with_blocks,
                                     const std::function<void(Index, Index)>& after_block = {}, Index per_chunk = 0,
                                     ChunkRange range = {});

class DeviceChain;
// The same sweep on a DeviceChain's kernels (--mode matrix-free --device cuda): the same probes, uploaded once per
// chunk's stack; the stacks stay on the device and only each one's (C, C) Gram matrix comes back. The chain must
// hold a chunk's copies (its max_copies).
HutchinsonSweep hutchinson_frobenius(DeviceChain& chain, Index K, uint64_t seed, bool with_blocks,
                                     const std::function<void(Index, Index)>& after_block = {}, Index per_chunk = 0,
                                     ChunkRange range = {});

}  // namespace gradflow
