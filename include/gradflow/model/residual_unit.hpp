// residual_unit.hpp — one residual sublayer, the unit every placement is a recipe over:
//   u = κ·PreNorm(x);  b = BranchNorm(G(u));  z = s ⊙ x + c·b [+ x_block];  y = PostNorm(z)
// each norm optional; κ a constant on the pre-norm's output (1; LayerNorm Scaling's 1/√l); s the skip coefficient: a constant (1; DeepNorm's α) or a learnable (d) vector
// (Admin's ω "attn_omega"/"ffn_omega", NormFormer's "w_resid"); c = λ·a with λ the residual scale
// (--residual-scale) and a ReZero's learnable gate (1 when absent); x_block the input of the whole block,
// added only by B2T's bottom-to-top connection (Takase et al. 2022).
// Parallel (GPT-J, GPT-NeoX/Pythia, PaLM): the branch reads the block input instead, u = κ·PreNorm(x_block), so a
// block of two such units is x + A(N1 x) + F(N2 x); the unit's Jacobian on its own input is J_post·diag(s), the
// branch's part J_post · c · J_branch · J_G · κ J_pre goes to x_block.
//   Post-LN: PostNorm only.  Pre-LN: PreNorm only.  Sandwich: PreNorm + BranchNorm.  ReZero: gate, no norm.
// Its Jacobian: J = J_post · (diag(s) + c · J_branch · J_G · κ J_pre)  (and ∂y/∂x_block = J_post for B2T).
// Dual stream (ResiDual, Xie et al. 2023): the state is the pair [x_a | x_d] (n, 2d); the unit above runs on x_a
// and its branch term c·b is also added to x_d: y_a = PostNorm(s ⊙ x_a + c·b), y_d = x_d + c·b. Its Jacobian on
// the pair is [[J_post·(diag(s) + A), 0], [A, I]] with A = c · J_branch · J_G · κ J_pre.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "gradflow/model/sublayer.hpp"
#include "gradflow/ops/norm.hpp"

namespace gradflow {

struct UnitSpec {
  SublayerKind kind = SublayerKind::Attention;
  std::string pre_norm;     // parameter prefix of the norm before G ("" = none), e.g. "norm1"
  double pre_norm_scale = 1.0;  // κ: the pre-norm's output is multiplied by it (LayerNorm Scaling: 1/√l)
  std::string branch_norm;  // norm after G, inside the residual branch ("" = none), e.g. "norm3"
  std::string post_norm;    // norm after the residual sum ("" = none), e.g. "norm1"
  double skip_scale = 1.0;  // s (scalar form)
  std::string skip_param;   // learnable (d) skip vector s ("" = none), e.g. "attn_omega"; replaces skip_scale
  double branch_scale = 1.0;  // λ
  bool gate = false;          // ReZero: multiply the branch by the learnable scalar "resweight"
  bool add_block_input = false;  // B2T: z also adds the block's input x_l
  bool parallel = false;         // the branch reads the block's input x_l, not the unit's (the parallel residual)
  bool dual_stream = false;      // ResiDual: the state is [x_a | x_d]; the unit runs on x_a and adds c·b to x_d
  // Inside G (see sublayer.hpp): names of the extra parameters ("" = none).
  std::string head_scale;  // attention: NormFormer's per-head gain (h), e.g. "c_attn"
  std::string inner_norm;  // attention: Sub-LN's norm of the concatenated heads, e.g. "self_attn.inner_attn_ln"
  bool qkv_norm = false;   // attention: HybridNorm's norms of Q, K, V per head, "self_attn.{q,k,v}_norm" (width d/h)
  std::string mid_norm;    // feed-forward: norm (width d_ff) between activation and linear2, e.g. "ffn_layernorm"
};

// ResiDual's pair [a | d]: a in the left columns, d in the right ones of every row (stacked copies allowed).
Mat stream_pair(const Mat& a, const Mat& d);

struct UnitCache {
  NormCache pre, branch, post;
  SublayerCache g;
  Mat b;  // (n, d) branch output after BranchNorm, before c
  Mat x;  // (n, d) unit input, kept only when the skip is learnable (for ∂L/∂s)
};

struct ResidualUnit {
  UnitSpec spec;
  std::shared_ptr<const Sublayer> G;  // the branch: AttentionSublayer or FeedForwardSublayer
  std::optional<NormLayer> pre, branch, post;
  int gate = -1;  // index of the ReZero scalar, when spec.gate
  int skip = -1;  // index of the learnable (1, d) skip vector, when spec.skip_param is set
  const KernelOps* kernels = &cpu_kernels();  // what its sums and scalings run on (the Model's)
  // Autocast, when the branch output b is of the low type (no branch norm after a matrix product): that type's
  // kernels (the c·b of a number c is computed in it, and b's cotangent cast to it). Null otherwise.
  const KernelOps* branch_kernels = nullptr;

  double branch_coefficient(const ParamStore& p) const;  // c = λ·a
  // s + c·b, as the forward pass adds the branch (Model::unit_inputs repeats it)
  Mat add_branch(const ParamStore& p, Mat s, const Mat& b) const;
  Mat branch_cotangent(const ParamStore& p, const Mat& dcb) const;  // ∂L/∂b from ∂L/∂(c·b)
  // block_input: x_l of the enclosing block, required when spec.add_block_input or spec.parallel.
  Mat forward(const ParamStore& p, const Mat& x, UnitCache& c, const Mat* block_input = nullptr) const;
  // d_block_input (when spec.add_block_input or spec.parallel): receives ∂L/∂x_block through the B2T connection
  // (= dz) or, parallel, through the branch.
  Mat vjp(const ParamStore& p, const UnitCache& c, const Mat& dy, ParamGrads* g, Mat* d_block_input = nullptr) const;
  Mat jvp(const ParamStore& p, const UnitCache& c, const Mat& dx, const Mat* dx_block = nullptr) const;
  // J_x dx + J_θ dθ (one copy; dθ shaped like the parameters): dz = s ⊙ dx + ds ⊙ x + c·db + λ·da·b [+ dx_block].
  Mat jvp_with_params(const ParamStore& p, const UnitCache& c, const Mat& dx, const ParamGrads& dtheta,
                      const Mat* dx_block = nullptr) const;
  Jacobian jacobian(const ParamStore& p, const UnitCache& c) const;  // ∂y/∂x
  // ∂y/∂x_block: through the B2T connection J_post (identity without a post norm); parallel, through the branch.
  Jacobian block_input_jacobian(const ParamStore& p, const UnitCache& c) const;
  bool reads_block_input() const { return spec.add_block_input || spec.parallel; }
  Mat apply_skip(const ParamStore& p, const Mat& x) const;  // s ⊙ x (stacked copies allowed)
  bool skip_is_identity() const { return skip < 0 && spec.skip_scale == 1.0; }  // s ⊙ x = x

 private:
  Jacobian branch_jacobian(const ParamStore& p, const UnitCache& c) const;  // c · J_branch · J_G · κ J_pre
  Jacobian skip_jacobian(const ParamStore& p, Index n, Index d) const;        // diag(s) per token
  // The single-stream unit. extra_dcb: a cotangent on the branch term c·b besides dz (ResiDual's x_d);
  // dcb: receives the branch term's tangent c·db (+ λ·da·b).
  Mat forward_stream(const ParamStore& p, const Mat& x, UnitCache& c, const Mat* block_input) const;
  Mat vjp_stream(const ParamStore& p, const UnitCache& c, const Mat& dy, ParamGrads* g, Mat* d_block_input,
                 const Mat* extra_dcb) const;
  Mat jvp_stream(const ParamStore& p, const UnitCache& c, const Mat& dx, const Mat* dx_block, Mat* dcb) const;
  Mat jvp_with_params_stream(const ParamStore& p, const UnitCache& c, const Mat& dx, const ParamGrads& dtheta,
                             const Mat* dx_block, Mat* dcb) const;
};

}  // namespace gradflow
