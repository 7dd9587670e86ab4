// sublayer.hpp — the two residual branches G of a Transformer block, with their parameters' places:
//   Attention:    G(x) = MHA(x)                          (self_attn.in_proj_*, self_attn.out_proj.*)
//   FeedForward:  G(x) = linear2(act(linear1(x)))        (linear1.*, linear2.*), token-wise
#pragma once
#include "gradflow/jacobian.hpp"
#include "gradflow/ops/activation.hpp"
#include "gradflow/ops/attention.hpp"
#include "gradflow/params.hpp"

namespace gradflow {

enum class SublayerKind { Attention, FeedForward };

// What a sublayer's forward saves.
struct SublayerCache {
  ops::AttentionCache attn;  // Attention only
  Mat x;                     // (n, d)    FeedForward: input
  Mat a;                     // (n, d_ff) FeedForward: act(z1)
  Mat fprime;                // (n, d_ff) FeedForward: act'(z1)
};

struct Sublayer {
  SublayerKind kind = SublayerKind::Attention;
  // Attention
  int in_w = -1, in_b = -1, out_w = -1, out_b = -1;
  Index heads = 1;
  bool causal = false;
  // FeedForward
  int w1 = -1, b1 = -1, w2 = -1, b2 = -1;
  Activation activation = Activation::Relu;

  Mat forward(const ParamStore& p, const Mat& x, SublayerCache& c) const;
  Mat vjp(const ParamStore& p, const SublayerCache& c, const Mat& dy, ParamGrads* g) const;
  Mat jvp(const ParamStore& p, const SublayerCache& c, const Mat& dx) const;
  Jacobian jacobian(const ParamStore& p, const SublayerCache& c) const;

 private:
  ops::AttentionWeights attention_weights(const ParamStore& p) const;
};

}  // namespace gradflow
