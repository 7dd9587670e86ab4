// rope.hpp — rotary position embedding (Su et al. 2021, RoFormer) on the query and key heads of [Q | K | V], in the
// Hugging Face "rotate half" pairing (Llama, Qwen, Gemma, OLMo, GPT-NeoX): within each head's first r features
// (r = the rotary dimension, even; Pythia rotates a fraction of each head), feature i pairs with i + r/2,
//   out_i       = x_i cos(p·θ_i) − x_{i+r/2} sin(p·θ_i)
//   out_{i+r/2} = x_{i+r/2} cos(p·θ_i) + x_i sin(p·θ_i),      θ_i = theta^(−2i/r), i < r/2,
// p the token's position (its row, mod n for stacked copies); features r .. e−1 and V pass through. The angles are
// computed in float64 (Hugging Face computes θ_i in float32). Linear in x, a rotation per token: the JVP is the same
// map, the VJP the inverse rotation (angle −p·θ_i), the Jacobian block diagonal per token; no parameters.
#pragma once
#include "gradflow/core/jacobian.hpp"
#include "gradflow/core/types.hpp"

namespace gradflow::ops {

struct RopeTables {
  Index heads = 0, kv_heads = 0, head_dim = 0, rotary_dim = 0;  // [Q | K | V]: h·e, K·e, K·e columns
  Mat cos, sin;                                                 // (n, r/2): cos(p·θ_i), sin(p·θ_i)
};

// The tables for n positions; rotary_dim even, 2 <= rotary_dim <= head_dim.
RopeTables rope_tables(Index n, Index heads, Index kv_heads, Index head_dim, Index rotary_dim, double theta);
// The rotary dimension of a head of width e for a fraction f: ⌊f·e⌋, as Hugging Face's int(head_dim * fraction)
// (ModelConfig::validate requires it even and at least 2).
Index rotary_dim_of(Index head_dim, double fraction);

// [Q | K | V] (k·n stacked rows allowed) with Q and K rotated; inverse = true rotates by −p·θ_i (the VJP).
Mat rope_forward(const RopeTables& t, const Mat& qkv, bool inverse = false);
inline Mat rope_jvp(const RopeTables& t, const Mat& dqkv) { return rope_forward(t, dqkv); }
inline Mat rope_vjp(const RopeTables& t, const Mat& dout) { return rope_forward(t, dout, true); }
// Token-wise blocks (qkv width square): the rotation of each position.
Jacobian rope_jacobian(const RopeTables& t);

}  // namespace gradflow::ops
