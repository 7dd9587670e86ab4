// sublayer.hpp — the two residual branches G of a Transformer block, with their parameters' places:
//   Attention:    G(x) = c_h ⊙ (InnerNorm(MHA_heads(x)) W_outᵀ + b_out)   (self_attn.in_proj_*, self_attn.out_proj.*)
//   FeedForward:  G(x) = linear2(MidNorm(act(linear1(x))))               (linear1.*, linear2.*), token-wise
// Optional extras (absent for post/pre/...): InnerNorm on the concatenated heads before out_proj (Sub-LN, Magneto:
// torchscale's self_attn.inner_attn_ln); c_h a learnable gain per head applied to the attention output in
// head-sized column groups (NormFormer's c_attn, applied after out_proj as fairseq's reference code does);
// MidNorm of width d_ff before linear2 (NormFormer and Sub-LN: ffn_layernorm).
#pragma once
#include <optional>

#include "gradflow/jacobian.hpp"
#include "gradflow/ops/activation.hpp"
#include "gradflow/ops/attention.hpp"
#include "gradflow/ops/norm.hpp"
#include "gradflow/params.hpp"

namespace gradflow {

enum class SublayerKind { Attention, FeedForward };

// What a sublayer's forward saves.
struct SublayerCache {
  ops::AttentionCache attn;  // Attention only (with an inner norm: of the heads, out_proj = I)
  NormCache inner;           // Attention with an inner norm
  Mat on;                    // (n, d)    Attention with an inner norm: InnerNorm(O), input of out_proj
  Mat a_out;                 // (n, d)    Attention with a head scale: the output before c_h
  Mat x;                     // (n, d)    FeedForward: input
  Mat a;                     // (n, d_ff) FeedForward: act(z1)
  Mat fprime;                // (n, d_ff) FeedForward: act'(z1)
  NormCache mid;             // FeedForward with a mid norm
  Mat an;                    // (n, d_ff) FeedForward with a mid norm: MidNorm(a), input of linear2
};

struct Sublayer {
  SublayerKind kind = SublayerKind::Attention;
  // Attention
  int in_w = -1, in_b = -1, out_w = -1, out_b = -1;
  Index heads = 1;
  bool causal = false;
  int head_scale = -1;                // (1, h) NormFormer's c_attn, or -1
  std::optional<NormLayer> inner;     // Sub-LN's inner_attn_ln (width d), or none
  // FeedForward
  int w1 = -1, b1 = -1, w2 = -1, b2 = -1;
  Activation activation = Activation::Relu;
  std::optional<NormLayer> mid;       // ffn_layernorm (width d_ff), or none

  Mat forward(const ParamStore& p, const Mat& x, SublayerCache& c) const;
  Mat vjp(const ParamStore& p, const SublayerCache& c, const Mat& dy, ParamGrads* g) const;
  Mat jvp(const ParamStore& p, const SublayerCache& c, const Mat& dx) const;
  Jacobian jacobian(const ParamStore& p, const SublayerCache& c) const;

 private:
  ops::AttentionWeights attention_weights(const ParamStore& p) const;
  RowVec head_gains(const ParamStore& p) const;  // (d): c_h repeated over the head's d/h columns
  Mat attention_forward(const ParamStore& p, const Mat& x, SublayerCache& c) const;
  Mat attention_vjp(const ParamStore& p, const SublayerCache& c, const Mat& dy, ParamGrads* g) const;
  Mat attention_jvp(const ParamStore& p, const SublayerCache& c, const Mat& dx) const;
  Jacobian attention_jacobian(const ParamStore& p, const SublayerCache& c) const;
};

}  // namespace gradflow
