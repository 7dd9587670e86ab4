// token_geometry.hpp — how alike the tokens of a hidden state are, and how an attention head spreads its
// probability (docs/math.md §10). X is (n tokens, d features); P is one head's (n, n) row-stochastic matrix.
//   mean_pairwise_cosine  = (1/(n(n−1))) Σ_{i≠j} ⟨x_i, x_j⟩ / (‖x_i‖ ‖x_j‖)       (NaN for n < 2 or a zero token)
//   rank_one_distance     = ‖X − 1·x̄ᵀ‖_F / ‖X‖_F,  x̄ = (1/n) Σ_i x_i             (Dong et al. 2021; NaN when X = 0)
//   stable_rank           = ‖X‖_F² / ‖X‖_2²                                       (NaN when X = 0)
//   attention entropy     = (1/n) Σ_i −Σ_j P_ij ln P_ij   (0·ln 0 = 0)
//   its maximum           = (1/n) Σ_i ln m_i, m_i the keys query i may attend to (n; i+1 under a causal mask)
//   self attention        = (1/n) Σ_i P_ii
#pragma once
#include "gradflow/core/types.hpp"

namespace gradflow {

struct TokenGeometry {
  double mean_cosine = 0;
  double rank_one_distance = 0;
  double stable_rank = 0;
};
TokenGeometry token_geometry(const Mat& X);

struct AttentionStats {
  double entropy = 0;
  double max_entropy = 0;
  double self_attention = 0;
};
// causal: whether query i may attend only to keys 0..i (P is zero above the diagonal then).
AttentionStats attention_stats(const Mat& P, bool causal);

}  // namespace gradflow
