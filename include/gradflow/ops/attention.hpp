// attention.hpp — multi-head self-attention exactly as PyTorch nn.MultiheadAttention (batch of one):
//   [Q | K | V] = x W_inᵀ + b_in                      W_in (3d, d): rows q, k, v;  b_in (1, 3d)
//   per head h (e = d/h columns):  S = Q_h K_hᵀ / √e,  P = softmax_rows(S)  (−∞ above the diagonal if causal)
//   O_h = P V_h;  O = [O_0 | ... | O_{h−1}]  (n, d);   A = O W_outᵀ + b_out   W_out (d, d)
// The Jacobian mixes tokens, so it is dense; docs/math.md derives its token-pair blocks.
#pragma once
#include <vector>

#include "gradflow/core/jacobian.hpp"
#include "gradflow/core/types.hpp"
#include "gradflow/kernels/cpu_kernels.hpp"

namespace gradflow::ops {

// What attention's forward saves (softmax probabilities are the only non-linear state).
struct AttentionCache {
  Mat x;               // (n, d)  input
  Mat qkv;             // (n, 3d) [Q | K | V]
  std::vector<Mat> P;  // heads × (n, n) probabilities, exact zeros where masked
  Mat O;               // (n, d)  heads concatenated, before out_proj
};

struct AttentionWeights {
  const Mat& in_w;   // (3d, d)
  const Mat* in_b;   // (1, 3d), or null: no bias (--bias off)
  const Mat& out_w;  // (d, d)
  const Mat* out_b;  // (1, d), or null
  Index heads;
  bool causal;
};

// Parameter-gradient accumulators (+=); any may be null.
struct AttentionGrads {
  Mat* in_w = nullptr;
  Mat* in_b = nullptr;
  Mat* out_w = nullptr;
  Mat* out_b = nullptr;
};

Mat attention_forward(const AttentionWeights& w, const Mat& x, AttentionCache& c, const KernelOps& k = cpu_kernels());
// Cotangent dA may hold k stacked copies; parameter gradients need k = 1.
Mat attention_vjp(const AttentionWeights& w, const AttentionCache& c, const Mat& dA, const AttentionGrads& g,
                  const KernelOps& k = cpu_kernels());
// Tangent dx may hold k stacked copies.
Mat attention_jvp(const AttentionWeights& w, const AttentionCache& c, const Mat& dx, const KernelOps& k = cpu_kernels());
// Tangents of the parameters (same shapes; any may be null = 0), for attention_param_jvp.
struct AttentionTangents {
  const Mat* in_w = nullptr;
  const Mat* in_b = nullptr;
  const Mat* out_w = nullptr;
  const Mat* out_b = nullptr;
};
// The tangent of A for an input tangent dx (one copy) and parameter tangents dp: J_x dx + J_θ dp.
Mat attention_param_jvp(const AttentionWeights& w, const AttentionCache& c, const Mat& dx, const AttentionTangents& dp,
                        const KernelOps& k = cpu_kernels());
// The heads alone, between [Q | K | V] and O (for a branch that changes Q, K, V before the heads, e.g.
// HybridNorm's QKV norms): c.x (for the sizes) and c.qkv set by the caller; fills c.P and c.O.
void attention_heads_forward(Index heads, bool causal, AttentionCache& c, const KernelOps& k = cpu_kernels());
// dO (k stacked copies allowed) -> d[Q | K | V]
Mat attention_heads_vjp(Index heads, const AttentionCache& c, const Mat& dO, const KernelOps& k = cpu_kernels());
// d[Q | K | V] (k stacked copies allowed) -> dO
Mat attention_heads_jvp(Index heads, const AttentionCache& c, const Mat& dqkv, const KernelOps& k = cpu_kernels());
// Dense (n·d, n·d): block (i, j) = Σ_h W_o,h [ P_ij W_v,h + (P_ij/√e)(V_j − O_i) q_iᵀ W_k,h + δ_ij C_i W_q,h /√e ],
// C_i = Σ_k P_ik (V_k − O_i) k_kᵀ.
Jacobian attention_jacobian(const AttentionWeights& w, const AttentionCache& c);

}  // namespace gradflow::ops
