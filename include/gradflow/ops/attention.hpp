// attention.hpp — multi-head self-attention exactly as PyTorch nn.MultiheadAttention (batch of one):
//   [Q | K | V] = x W_inᵀ + b_in                      W_in (3d, d): rows q, k, v;  b_in (1, 3d)
//   per head h (e = d/h columns):  S = Q_h K_hᵀ / √e,  P = softmax_rows(S)  (−∞ above the diagonal if causal)
//   O_h = P V_h;  O = [O_0 | ... | O_{h−1}]  (n, d);   A = O W_outᵀ + b_out   W_out (d, d)
// The Jacobian mixes tokens, so it is dense; docs/math.md derives its token-pair blocks.
// The decoder blocks generalize the heads (HeadsSpec): h query heads of width e and K key/value heads (grouped-query
// attention: query head j reads key/value head ⌊j·K/h⌋), [Q | K | V] of width (h + 2K)·e, logits S = scale·Q_j K_gᵀ
// (default scale 1/√e), soft-capped T = C·tanh(S/C) before the mask (Gemma-2), O (n, h·e), W_out (d, h·e).
#pragma once
#include <vector>

#include "gradflow/core/jacobian.hpp"
#include "gradflow/core/types.hpp"
#include "gradflow/kernels/cpu_kernels.hpp"

namespace gradflow::ops {

// The heads' shape and extras.
struct HeadsSpec {
  Index heads = 1, kv_heads = 1, head_dim = 1;
  double scale = 1.0;    // S = scale · Q Kᵀ
  double softcap = 0.0;  // T = C·tanh(S/C) before the mask; 0: none
  bool causal = false;
  Index q_width() const { return heads * head_dim; }
  Index kv_width() const { return kv_heads * head_dim; }
  Index qkv_width() const { return q_width() + 2 * kv_width(); }
  // nn.MultiheadAttention's: K = h, e = d/h, scale 1/√e, no cap
  static HeadsSpec classic(Index heads, Index d, bool causal);
  bool is_classic(Index d) const;
};

// What attention's forward saves (softmax probabilities are the only non-linear state).
struct AttentionCache {
  Mat x;               // (n, d)  input
  Mat qkv;             // (n, (h + 2K)·e) [Q | K | V] as the heads read them
  std::vector<Mat> P;  // heads × (n, n) probabilities, exact zeros where masked
  std::vector<Mat> cap_slope;  // with a soft-cap: heads × (n, n) dT/dS = 1 − tanh²(S/C)
  Mat O;               // (n, h·e) heads concatenated, before out_proj
};

struct AttentionWeights {
  const Mat& in_w;   // ((h + 2K)·e, d)
  const Mat* in_b;   // (1, (h + 2K)·e), or null: no bias (--bias off)
  const Mat& out_w;  // (d, h·e)
  const Mat* out_b;  // (1, d), or null
  HeadsSpec heads;
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
// HybridNorm's QKV norms, QK-norm, RoPE): c.qkv set by the caller (c.x's rows give n); fills c.P (and c.cap_slope)
// and c.O.
void attention_heads_forward(const HeadsSpec& s, AttentionCache& c, const KernelOps& k = cpu_kernels());
// dO (k stacked copies allowed) -> d[Q | K | V]
Mat attention_heads_vjp(const HeadsSpec& s, const AttentionCache& c, const Mat& dO, const KernelOps& k = cpu_kernels());
// d[Q | K | V] (k stacked copies allowed) -> dO
Mat attention_heads_jvp(const HeadsSpec& s, const AttentionCache& c, const Mat& dqkv, const KernelOps& k = cpu_kernels());
// Dense (n·d, n·d): block (i, j) = Σ_h W_o,h [ P_ij W_v,h + (P_ij/√e)(V_j − O_i) q_iᵀ W_k,h + δ_ij C_i W_q,h /√e ],
// C_i = Σ_k P_ik (V_k − O_i) k_kᵀ. Classic heads only (HeadsSpec::classic); the others' Jacobian is assembled from
// JVPs by the sublayer.
Jacobian attention_jacobian(const AttentionWeights& w, const AttentionCache& c);

}  // namespace gradflow::ops
