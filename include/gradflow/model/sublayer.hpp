// sublayer.hpp — the two residual branches G of a Transformer block, each its own class behind one interface:
//   AttentionSublayer:    G(x) = c_h ⊙ (InnerNorm(MHA_heads(x)) W_outᵀ + b_out)   (self_attn.in_proj_*, self_attn.out_proj.*)
//   FeedForwardSublayer:  G(x) = linear2(MidNorm(act(linear1(x))))               (linear1.*, linear2.*), token-wise
//     gated (SwiGLU, GeGLU): G(x) = linear2(MidNorm(act(linear1(x)) ⊙ linear3(x)))  (+ linear3.*: the up projection)
// Any bias may be absent (--bias off; --qkv-bias keeps in_proj_bias): its index is -1 and the op skips it.
// With QKV norms (HybridNorm; OLMo's q_norm/k_norm/v_norm): [Q | K | V] = x W_inᵀ + b_in, then each of Q, K, V is
// normalized per head (a norm of width d/h, its parameters shared by the heads) before the heads see it. The decoder
// blocks' QK-norm is the same for Q and K only, per head (Qwen3) or over the whole projection (OLMo-2); then RoPE
// rotates Q and K (ops/rope.hpp); the heads may be grouped (GQA), of any width, scaled and soft-capped
// (ops::HeadsSpec).
// Optional extras (absent for post/pre/...): InnerNorm on the concatenated heads before out_proj (Sub-LN, Magneto:
// torchscale's self_attn.inner_attn_ln); c_h a learnable gain per head applied to the attention output in
// head-sized column groups (NormFormer's c_attn, applied after out_proj as fairseq's reference code does);
// MidNorm of width d_ff before linear2 (NormFormer and Sub-LN: ffn_layernorm).
#pragma once
#include <array>
#include <optional>
#include <variant>

#include "gradflow/core/jacobian.hpp"
#include "gradflow/kernels/cpu_kernels.hpp"
#include "gradflow/ops/activation.hpp"
#include "gradflow/ops/attention.hpp"
#include "gradflow/ops/glu.hpp"
#include "gradflow/ops/norm.hpp"
#include "gradflow/ops/rope.hpp"
#include "gradflow/core/params.hpp"

namespace gradflow {

enum class SublayerKind { Attention, FeedForward };

// What the attention branch's forward saves.
struct AttentionBranchCache {
  ops::AttentionCache attn;  // with an inner norm: of the heads only (out_proj = I)
  NormCache inner;           // with an inner norm
  Mat on;                    // (n, d) with an inner norm: InnerNorm(O), input of out_proj
  Mat a_out;                 // (n, d) with a head scale: the output before c_h
  std::array<NormCache, 3> qkv;  // with QKV norms: of Q, K, V, each on (n·h, d/h) rows (token-major, then head)
  ops::RopeTables rope;          // with rotary positions: the tables of this input's n positions
};

// What the feed-forward branch's forward saves.
struct FeedForwardCache {
  Mat x;          // (n, d)    input
  Mat a;          // (n, d_ff) act(z1), or gated act(z1) ⊙ z3: the input of linear2 (of the mid norm if any)
  Mat fprime;     // (n, d_ff) act'(z1) (not gated)
  ops::GluCache glu;  // gated
  NormCache mid;  // with a mid norm
  Mat an;         // (n, d_ff) with a mid norm: MidNorm(a), input of linear2
};

// Each branch fills its own alternative in forward().
using SublayerCache = std::variant<std::monostate, AttentionBranchCache, FeedForwardCache>;

class Sublayer {
 public:
  virtual ~Sublayer() = default;
  const KernelOps* kernels = &cpu_kernels();  // what its passes run on (the Model's, set when it is built)
  // Autocast: the float32 tensors' kernels (kernels are then the low type's): the sum of the input's cotangents
  // (its input is float32) and NormFormer's head gains (a float32 parameter promotes the output). Null otherwise.
  const KernelOps* f32_kernels = nullptr;
  const KernelOps& input_kernels() const { return f32_kernels ? *f32_kernels : *kernels; }
  virtual SublayerKind kind() const = 0;
  virtual Mat forward(const ParamStore& p, const Mat& x, SublayerCache& c) const = 0;
  virtual Mat vjp(const ParamStore& p, const SublayerCache& c, const Mat& dy, ParamGrads* g) const = 0;
  virtual Mat jvp(const ParamStore& p, const SublayerCache& c, const Mat& dx) const = 0;
  virtual Jacobian jacobian(const ParamStore& p, const SublayerCache& c) const = 0;
  // J_x dx + J_θ dθ: input tangent dx (one copy) and parameter tangents dθ (shaped like the parameters).
  virtual Mat jvp_with_params(const ParamStore& p, const SublayerCache& c, const Mat& dx, const ParamGrads& dtheta) const = 0;
};

class AttentionSublayer final : public Sublayer {
 public:
  // in_w ((h + 2K)·e, d), in_b, out_w (d, h·e), out_b (d): parameter indices (a bias -1 when absent); d the model
  // width; the heads' shape and extras in `heads`.
  AttentionSublayer(int in_w, int in_b, int out_w, int out_b, const ops::HeadsSpec& heads, Index d);
  int head_scale = -1;             // (1, h) NormFormer's c_attn, or -1
  std::optional<NormLayer> inner;  // Sub-LN's inner_attn_ln (width h·e), or none
  // HybridNorm's self_attn.{q,k,v}_norm (width e, per head): all three; QK-norm: q and k only
  std::array<std::optional<NormLayer>, 3> qkv_norm;
  bool qkv_norm_whole = false;  // QK-norm over the whole projection (OLMo-2: widths h·e and K·e), not per head
  Index rotary_dim = 0;         // RoPE on the first rotary_dim features of every q and k head (0: none)
  double rope_theta = 10000;

  SublayerKind kind() const override { return SublayerKind::Attention; }
  // Where the projections live (indices into the ParamStore) and the head count (device engines).
  int in_weight() const { return in_w_; }
  int out_weight() const { return out_w_; }
  Index heads() const { return spec_.heads; }
  const ops::HeadsSpec& heads_spec() const { return spec_; }
  // What the device chain's attention covers: classic heads, no QK-norm without V's, no RoPE.
  bool decoder_extras() const { return rotary_dim > 0 || !spec_.is_classic(d_) || (qkv_norm[0] && !qkv_norm[2]); }
  RowVec head_gains(const Mat& gains) const;  // (d): the (1, h) gains c_h repeated over each head's d/h columns
  Mat forward(const ParamStore& p, const Mat& x, SublayerCache& c) const override;
  Mat vjp(const ParamStore& p, const SublayerCache& c, const Mat& dy, ParamGrads* g) const override;
  Mat jvp(const ParamStore& p, const SublayerCache& c, const Mat& dx) const override;
  Jacobian jacobian(const ParamStore& p, const SublayerCache& c) const override;
  Mat jvp_with_params(const ParamStore& p, const SublayerCache& c, const Mat& dx, const ParamGrads& dtheta) const override;

 private:
  ops::AttentionWeights weights(const ParamStore& p) const;     // the whole attention, out_proj included
  ops::AttentionWeights heads_only(const ParamStore& p) const;  // the heads before out_proj (out_proj = I, b = 0)
  bool has_qkv_norm() const { return qkv_norm[0].has_value(); }
  // [Q | K | V] changes between in_proj and the heads (norms, RoPE): the branch runs through qkv_forward & co.
  bool qkv_path() const { return has_qkv_norm() || rotary_dim > 0; }
  // The whole branch: heads on the normalized and rotated [Q | K | V], then InnerNorm (if any) and out_proj.
  Mat qkv_forward(const ParamStore& p, const Mat& x, AttentionBranchCache& c) const;
  Mat qkv_vjp(const ParamStore& p, const AttentionBranchCache& c, const Mat& da, ParamGrads* g) const;
  Mat qkv_jvp(const ParamStore& p, const AttentionBranchCache& c, const Mat& dx, const ParamGrads* dtheta) const;
  Jacobian qkv_jacobian(const ParamStore& p, const AttentionBranchCache& c) const;  // from n·d JVPs
  // The closed form of the decoder attention's Jacobian (attention_decoder_jacobian.cpp; docs/math.md §14)
  Jacobian decoder_jacobian(const ParamStore& p, const AttentionBranchCache& c) const;
  // [Q | K | V] -> [N_q(Q) | N_k(K) | N_v(V)] and its derivatives, stacked copies allowed (dtheta: one copy)
  Mat norm_qkv_forward(const ParamStore& p, const Mat& raw, AttentionBranchCache& c) const;
  Mat norm_qkv_vjp(const ParamStore& p, const AttentionBranchCache& c, const Mat& dn, ParamGrads* g) const;
  Mat norm_qkv_jvp(const ParamStore& p, const AttentionBranchCache& c, const Mat& draw, const ParamGrads* dtheta) const;
  int in_w_, in_b_, out_w_, out_b_;
  ops::HeadsSpec spec_;
  Index d_;
  Mat identity_;  // (h·e, h·e): out_proj of heads_only, built once
};

class FeedForwardSublayer final : public Sublayer {
 public:
  // w1 (d_ff, d), b1 (d_ff), w2 (d, d_ff), b2 (d): parameter indices (a bias -1 when absent); w3 (d_ff, d), b3
  // (d_ff): a gated branch's up projection (w3 -1: not gated).
  FeedForwardSublayer(int w1, int b1, int w2, int b2, Activation activation, int w3 = -1, int b3 = -1);
  std::optional<NormLayer> mid;  // ffn_layernorm (width d_ff), or none
  bool gated() const { return w3_ >= 0; }
  int linear3_weight() const { return w3_; }  // (d_ff, d), or -1

  SublayerKind kind() const override { return SublayerKind::FeedForward; }
  int linear1_weight() const { return w1_; }  // (d_ff, d), an index into the ParamStore
  int linear2_weight() const { return w2_; }  // (d, d_ff)
  Mat forward(const ParamStore& p, const Mat& x, SublayerCache& c) const override;
  Mat vjp(const ParamStore& p, const SublayerCache& c, const Mat& dy, ParamGrads* g) const override;
  Mat jvp(const ParamStore& p, const SublayerCache& c, const Mat& dx) const override;
  Jacobian jacobian(const ParamStore& p, const SublayerCache& c) const override;
  Mat jvp_with_params(const ParamStore& p, const SublayerCache& c, const Mat& dx, const ParamGrads& dtheta) const override;

 private:
  // z1 = linear1(x), a = act(z1) [⊙ linear3(x)]: the cache's a (and fprime or glu)
  void hidden_forward(const ParamStore& p, const Mat& x, FeedForwardCache& c) const;
  int w1_, b1_, w2_, b2_, w3_, b3_;
  Activation activation_;
};

}  // namespace gradflow
