// attention_sublayer.cpp — A = c_h ⊙ (InnerNorm(O) W_outᵀ + b_out), O the concatenated heads (sublayer.hpp).
// With QKV norms (HybridNorm) the heads read [N_q(Q) | N_k(K) | N_v(V)], each norm per head, through the
// attention op's heads-only functions; that path's explicit Jacobian is assembled from n·d JVPs (exact, one
// column per input coordinate), so the J·v, uᵀJ and finite-difference checks compare independent forms.
// With an inner norm, attention runs with out_proj = I (exactly O) so the norm can sit between the heads and
// out_proj without changing the attention op; every extra is skipped when absent, so post/pre/... take exactly
// the plain attention path.
#include "gradflow/model/sublayer.hpp"
#include "gradflow/ops/elementwise.hpp"
#include "gradflow/ops/linear.hpp"

namespace gradflow {
namespace {

// Token-wise Jacobian of y = x ⊙ s: n copies of diag(s).
Jacobian diagonal_jacobian(const RowVec& s, Index n) {
  std::vector<Mat> blocks(static_cast<size_t>(n), Mat(s.transpose().asDiagonal()));
  return Jacobian::tokenwise(std::move(blocks));
}

}  // namespace

AttentionSublayer::AttentionSublayer(int in_w, int in_b, int out_w, int out_b, const ops::HeadsSpec& heads, Index d)
    : in_w_(in_w), in_b_(in_b), out_w_(out_w), out_b_(out_b), spec_(heads), d_(d),
      identity_(Mat::Identity(heads.q_width(), heads.q_width())) {}

ops::AttentionWeights AttentionSublayer::weights(const ParamStore& p) const {
  return ops::AttentionWeights{p[in_w_], param_or_null(p, in_b_), p[out_w_], param_or_null(p, out_b_), spec_};
}

ops::AttentionWeights AttentionSublayer::heads_only(const ParamStore& p) const {
  return ops::AttentionWeights{p[in_w_], param_or_null(p, in_b_), identity_, nullptr, spec_};
}

RowVec AttentionSublayer::head_gains(const Mat& gains) const {
  const Index d = d_, heads = spec_.heads, e = d / heads;
  RowVec s(d);
  for (Index h = 0; h < heads; ++h) s.segment(h * e, e).setConstant(gains(0, h));
  return s;
}

Mat AttentionSublayer::forward(const ParamStore& p, const Mat& x, SublayerCache& cache) const {
  const KernelOps& k = *kernels;
  auto& c = cache.emplace<AttentionBranchCache>();
  Mat a;
  if (qkv_path()) {
    a = qkv_forward(p, x, c);
  } else if (!inner) {
    a = ops::attention_forward(weights(p), x, c.attn, k);
  } else {
    const Mat O = ops::attention_forward(heads_only(p), x, c.attn, k);  // (n, d)
    c.on = inner->forward(p, O, c.inner);
    a = ops::linear_forward(c.on, p[out_w_], param_or_null(p, out_b_), k);
  }
  if (head_scale < 0) return a;
  c.a_out = a;
  return ops::scaled_columns(a, head_gains(p[head_scale]), input_kernels());
}

Mat AttentionSublayer::vjp(const ParamStore& p, const SublayerCache& cache, const Mat& dy, ParamGrads* g) const {
  const KernelOps& k = *kernels;
  const auto& c = std::get<AttentionBranchCache>(cache);
  Mat da = dy;
  if (head_scale >= 0) {
    // in the forward pass this was: y = a ⊙ c_h (per head-sized column group)
    if (g) {  // (autocast: in float32, the gains' type)
      const KernelOps& kf = input_kernels();
      const Index e = dy.cols() / spec_.heads;
      Mat prod = dy;
      kf.multiply_tiled(prod.data(), c.a_out.data(), prod.rows(), prod.cols(), prod.rows());  // dy ⊙ a
      RowVec col = RowVec::Zero(dy.cols());
      kf.add_column_sums(prod.data(), prod.rows(), prod.cols(), col.data());
      const RowVec ones = RowVec::Ones(e);
      for (Index h = 0; h < spec_.heads; ++h) (*g)[head_scale](0, h) += kf.dot(col.data() + h * e, ones.data(), e);
    }
    da = ops::scaled_columns(dy, head_gains(p[head_scale]), k);
  }
  if (qkv_path()) return qkv_vjp(p, c, da, g);
  if (!inner) {
    ops::AttentionGrads ag;
    if (g) ag = {&(*g)[in_w_], grad_or_null(g, in_b_), &(*g)[out_w_], grad_or_null(g, out_b_)};
    return ops::attention_vjp(weights(p), c.attn, da, ag, k);
  }
  // in the forward pass this was: a = InnerNorm(O) W_outᵀ + b_out
  const Mat don = ops::linear_vjp(c.on, p[out_w_], da, g ? &(*g)[out_w_] : nullptr, grad_or_null(g, out_b_), k);
  const Mat dO = inner->vjp(p, c.inner, don, g);
  ops::AttentionGrads ag;
  if (g) ag = {&(*g)[in_w_], grad_or_null(g, in_b_), nullptr, nullptr};
  return ops::attention_vjp(heads_only(p), c.attn, dO, ag, k);
}

Mat AttentionSublayer::jvp(const ParamStore& p, const SublayerCache& cache, const Mat& dx) const {
  const KernelOps& k = *kernels;
  const auto& c = std::get<AttentionBranchCache>(cache);
  Mat t;
  if (qkv_path()) t = qkv_jvp(p, c, dx, nullptr);
  else if (!inner) t = ops::attention_jvp(weights(p), c.attn, dx, k);
  else t = ops::linear_jvp(p[out_w_], inner->jvp(p, c.inner, ops::attention_jvp(heads_only(p), c.attn, dx, k)), k);
  return head_scale < 0 ? t : ops::scaled_columns(t, head_gains(p[head_scale]), k);
}

Mat AttentionSublayer::jvp_with_params(const ParamStore& p, const SublayerCache& cache, const Mat& dx,
                                       const ParamGrads& dtheta) const {
  const KernelOps& k = *kernels;
  const auto& c = std::get<AttentionBranchCache>(cache);
  Mat t;
  if (qkv_path()) {
    t = qkv_jvp(p, c, dx, &dtheta);
  } else if (!inner) {
    t = ops::attention_param_jvp(weights(p), c.attn, dx,
                                 {&dtheta[in_w_], tangent_or_null(dtheta, in_b_), &dtheta[out_w_], tangent_or_null(dtheta, out_b_)}, k);
  } else {
    // a = InnerNorm(O) W_outᵀ + b_out, O the heads (attention with out_proj = I, b = 0)
    const Mat dO =
        ops::attention_param_jvp(heads_only(p), c.attn, dx, {&dtheta[in_w_], tangent_or_null(dtheta, in_b_), nullptr, nullptr}, k);
    t = ops::added(ops::linear_jvp(p[out_w_], inner->jvp_with_params(p, c.inner, dO, dtheta), k),
                   ops::linear_param_jvp(c.on, &dtheta[out_w_], tangent_or_null(dtheta, out_b_), p[out_w_].rows(), k), k);
  }
  if (head_scale < 0) return t;
  // y = a ⊙ c_h
  return ops::added(ops::scaled_columns(t, head_gains(p[head_scale]), k),
                    ops::scaled_columns(c.a_out, head_gains(dtheta[head_scale]), k), k);
}

Jacobian AttentionSublayer::jacobian(const ParamStore& p, const SublayerCache& cache) const {
  const auto& c = std::get<AttentionBranchCache>(cache);
  const Index n = c.attn.x.rows();
  Jacobian J;
  if (decoder_extras()) {  // the decoder blocks' heads, RoPE, QK-norm: their closed form
    J = decoder_jacobian(p, c);
  } else if (qkv_path()) {  // HybridNorm's Q/K/V norms: assembled from JVPs (its reports' bits as before)
    J = qkv_jacobian(p, c);
  } else if (!inner) {
    J = ops::attention_jacobian(weights(p), c.attn);
  } else {
    // (W_out · J_inner) token-wise first, then one product with the dense heads Jacobian
    J = (ops::linear_jacobian(p[out_w_], n) * inner->jacobian(p, c.inner)) * ops::attention_jacobian(heads_only(p), c.attn);
  }
  if (head_scale < 0) return J;  // moved out (a conditional expression would copy the (N, N) matrix)
  return diagonal_jacobian(head_gains(p[head_scale]), n) * std::move(J);
}

// --- QKV norms (HybridNorm), QK-norm (Qwen3 per head, OLMo-2 whole), RoPE ------------------------------------

// The parts of [Q | K | V] (rows × ((h + 2K)·e), stacked copies allowed): Q of h heads, K and V of K heads each. A
// per-head norm sees a part as (rows·heads, e): row-major, so row r·heads + j is head j of token r; a whole-projection
// norm sees it as it is. `f(j, part)` maps part j when its norm exists; a part without one passes through.
template <class F>
static Mat map_qkv_parts(const Mat& m, const ops::HeadsSpec& s, bool whole,
                         const std::array<std::optional<NormLayer>, 3>& norms, F f) {
  const Index rows = m.rows(), e = s.head_dim;
  const Index widths[3] = {s.q_width(), s.kv_width(), s.kv_width()}, starts[3] = {0, s.q_width(), s.q_width() + s.kv_width()};
  Mat out = m;
  for (int j = 0; j < 3; ++j) {
    if (!norms[static_cast<size_t>(j)]) continue;
    const Index w = widths[j], heads = w / e;
    const Mat part = m.middleCols(starts[j], w);
    const Mat y = whole ? f(j, part) : f(j, Mat(Eigen::Map<const Mat>(part.data(), rows * heads, e)));
    out.middleCols(starts[j], w) = Eigen::Map<const Mat>(y.data(), rows, w);
  }
  return out;
}

Mat AttentionSublayer::norm_qkv_forward(const ParamStore& p, const Mat& raw, AttentionBranchCache& c) const {
  return map_qkv_parts(raw, spec_, qkv_norm_whole, qkv_norm, [&](int j, const Mat& v) {
    return qkv_norm[static_cast<size_t>(j)]->forward(p, v, c.qkv[static_cast<size_t>(j)]);
  });
}

Mat AttentionSublayer::norm_qkv_vjp(const ParamStore& p, const AttentionBranchCache& c, const Mat& dn,
                                    ParamGrads* g) const {
  return map_qkv_parts(dn, spec_, qkv_norm_whole, qkv_norm, [&](int j, const Mat& v) {
    return qkv_norm[static_cast<size_t>(j)]->vjp(p, c.qkv[static_cast<size_t>(j)], v, g);
  });
}

Mat AttentionSublayer::norm_qkv_jvp(const ParamStore& p, const AttentionBranchCache& c, const Mat& draw,
                                    const ParamGrads* dtheta) const {
  return map_qkv_parts(draw, spec_, qkv_norm_whole, qkv_norm, [&](int j, const Mat& v) {
    const auto& nl = *qkv_norm[static_cast<size_t>(j)];
    const NormCache& nc = c.qkv[static_cast<size_t>(j)];
    return dtheta ? nl.jvp_with_params(p, nc, v, *dtheta) : nl.jvp(p, nc, v);
  });
}

Mat AttentionSublayer::qkv_forward(const ParamStore& p, const Mat& x, AttentionBranchCache& c) const {
  // [Q | K | V] = x W_inᵀ + b_in, normalized, rotated; O = heads; a = InnerNorm(O) W_outᵀ + b_out
  const KernelOps& k = *kernels;
  c.attn.x = x;
  c.attn.qkv = norm_qkv_forward(p, ops::linear_forward(x, p[in_w_], param_or_null(p, in_b_), k), c);
  if (rotary_dim > 0) {
    c.rope = ops::rope_tables(x.rows(), spec_.heads, spec_.kv_heads, spec_.head_dim, rotary_dim, rope_theta);
    c.attn.qkv = ops::rope_forward(c.rope, c.attn.qkv);
  }
  ops::attention_heads_forward(spec_, c.attn, k);
  if (!inner) return ops::linear_forward(c.attn.O, p[out_w_], param_or_null(p, out_b_), k);
  c.on = inner->forward(p, c.attn.O, c.inner);
  return ops::linear_forward(c.on, p[out_w_], param_or_null(p, out_b_), k);
}

Mat AttentionSublayer::qkv_vjp(const ParamStore& p, const AttentionBranchCache& c, const Mat& da, ParamGrads* g) const {
  // in the forward pass this was: a = InnerNorm(O) W_outᵀ + b_out
  const KernelOps& k = *kernels;
  Mat* gw = g ? &(*g)[out_w_] : nullptr;
  Mat* gb = grad_or_null(g, out_b_);
  const Mat dO = inner ? inner->vjp(p, c.inner, ops::linear_vjp(c.on, p[out_w_], da, gw, gb, k), g)
                       : ops::linear_vjp(c.attn.O, p[out_w_], da, gw, gb, k);
  // in the forward pass this was: O = heads(RoPE(N(x W_inᵀ + b_in)))
  Mat dqkv = ops::attention_heads_vjp(spec_, c.attn, dO, k);
  if (rotary_dim > 0) dqkv = ops::rope_vjp(c.rope, dqkv);
  const Mat draw = norm_qkv_vjp(p, c, dqkv, g);
  return ops::linear_vjp(c.attn.x, p[in_w_], draw, g ? &(*g)[in_w_] : nullptr, grad_or_null(g, in_b_), k);
}

Mat AttentionSublayer::qkv_jvp(const ParamStore& p, const AttentionBranchCache& c, const Mat& dx,
                               const ParamGrads* dtheta) const {
  // [Q | K | V] = x W_inᵀ + b_in, normalized, rotated; O = heads; a = InnerNorm(O) W_outᵀ + b_out
  const KernelOps& k = *kernels;
  Mat draw = ops::linear_jvp(p[in_w_], dx, k);
  if (dtheta)
    draw = ops::added(std::move(draw),
                      ops::linear_param_jvp(c.attn.x, &(*dtheta)[in_w_], tangent_or_null(*dtheta, in_b_), p[in_w_].rows(), k), k);
  Mat dqkv = norm_qkv_jvp(p, c, draw, dtheta);
  if (rotary_dim > 0) dqkv = ops::rope_jvp(c.rope, dqkv);
  const Mat dO = ops::attention_heads_jvp(spec_, c.attn, dqkv, k);
  const Mat& o = inner ? c.on : c.attn.O;
  Mat t = ops::linear_jvp(p[out_w_], inner ? (dtheta ? inner->jvp_with_params(p, c.inner, dO, *dtheta)
                                                     : inner->jvp(p, c.inner, dO))
                                           : dO, k);
  if (dtheta)
    t = ops::added(std::move(t), ops::linear_param_jvp(o, &(*dtheta)[out_w_], tangent_or_null(*dtheta, out_b_), p[out_w_].rows(), k),
                   k);
  return t;
}

Jacobian AttentionSublayer::qkv_jacobian(const ParamStore& p, const AttentionBranchCache& c) const {
  // column j·d + b of J is the JVP of the unit input at (token j, feature b): the d columns of one token at a
  // time, as d stacked tangents (memory: J and O(n·d²) beside it)
  const Index n = c.attn.x.rows(), d = c.attn.x.cols(), N = n * d;
  Mat J(N, N);
  for (Index j = 0; j < n; ++j) {
    Mat E = Mat::Zero(d * n, d);
    for (Index b = 0; b < d; ++b) E(b * n + j, b) = 1.0;
    const Mat T = qkv_jvp(p, c, E, nullptr);  // copy b: rows b·n .. b·n + n − 1, i.e. N contiguous entries
    for (Index b = 0; b < d; ++b) J.col(j * d + b) = Eigen::Map<const Vec>(T.data() + b * N, N);
  }
  return Jacobian::dense(std::move(J), n);
}

}  // namespace gradflow
