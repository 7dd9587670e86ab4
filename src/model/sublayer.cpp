// sublayer.cpp — attention and feed-forward branches over the ops (see sublayer.hpp).
// With an inner norm, attention runs with out_proj = I (exactly O) so the norm can sit between the heads
// and out_proj without changing the attention op; every extra is skipped when absent, so post/pre/... take
// exactly the code path they always did.
#include "gradflow/model/sublayer.hpp"

#include "gradflow/ops/linear.hpp"

namespace gradflow {
namespace {

// Multiplies every row of t (stacked copies allowed) by s element-wise.
Mat scale_columns(const Mat& t, const RowVec& s) { return t.array().rowwise() * s.array(); }

// Token-wise Jacobian of y = x ⊙ s: n copies of diag(s).
Jacobian diagonal_jacobian(const RowVec& s, Index n) {
  std::vector<Mat> blocks(static_cast<size_t>(n), Mat(s.transpose().asDiagonal()));
  return Jacobian::tokenwise(std::move(blocks));
}

}  // namespace

ops::AttentionWeights Sublayer::attention_weights(const ParamStore& p) const {
  return ops::AttentionWeights{p[in_w], p[in_b], p[out_w], p[out_b], heads, causal};
}

RowVec Sublayer::head_gains(const ParamStore& p) const {
  const Index d = p[out_w].rows(), e = d / heads;
  RowVec s(d);
  for (Index h = 0; h < heads; ++h) s.segment(h * e, e).setConstant(p[head_scale](0, h));
  return s;
}

// ---- attention: A = c_h ⊙ (InnerNorm(O) W_outᵀ + b_out), O the concatenated heads ----

Mat Sublayer::attention_forward(const ParamStore& p, const Mat& x, SublayerCache& c) const {
  Mat a;
  if (!inner) {
    a = ops::attention_forward(attention_weights(p), x, c.attn);
  } else {
    const Index d = x.cols();
    const Mat I = Mat::Identity(d, d), zero = Mat::Zero(1, d);
    const ops::AttentionWeights heads_only{p[in_w], p[in_b], I, zero, heads, causal};
    const Mat O = ops::attention_forward(heads_only, x, c.attn);  // (n, d)
    c.on = inner->forward(p, O, c.inner);
    a = ops::linear_forward(c.on, p[out_w], &p[out_b]);
  }
  if (head_scale < 0) return a;
  c.a_out = a;
  return scale_columns(a, head_gains(p));
}

Mat Sublayer::attention_vjp(const ParamStore& p, const SublayerCache& c, const Mat& dy, ParamGrads* g) const {
  Mat da = dy;
  if (head_scale >= 0) {
    // in the forward pass this was: y = a ⊙ c_h (per head-sized column group)
    if (g) {
      const Index e = dy.cols() / heads;
      const RowVec col = dy.cwiseProduct(c.a_out).colwise().sum();
      for (Index h = 0; h < heads; ++h) (*g)[head_scale](0, h) += col.segment(h * e, e).sum();
    }
    da = scale_columns(dy, head_gains(p));
  }
  if (!inner) {
    ops::AttentionGrads ag;
    if (g) ag = {&(*g)[in_w], &(*g)[in_b], &(*g)[out_w], &(*g)[out_b]};
    return ops::attention_vjp(attention_weights(p), c.attn, da, ag);
  }
  // in the forward pass this was: a = InnerNorm(O) W_outᵀ + b_out
  const Mat don = ops::linear_vjp(c.on, p[out_w], da, g ? &(*g)[out_w] : nullptr, g ? &(*g)[out_b] : nullptr);
  const Mat dO = inner->vjp(p, c.inner, don, g);
  const Index d = dy.cols();
  const Mat I = Mat::Identity(d, d), zero = Mat::Zero(1, d);
  const ops::AttentionWeights heads_only{p[in_w], p[in_b], I, zero, heads, causal};
  ops::AttentionGrads ag;
  if (g) ag = {&(*g)[in_w], &(*g)[in_b], nullptr, nullptr};
  return ops::attention_vjp(heads_only, c.attn, dO, ag);
}

Mat Sublayer::attention_jvp(const ParamStore& p, const SublayerCache& c, const Mat& dx) const {
  Mat t;
  if (!inner) {
    t = ops::attention_jvp(attention_weights(p), c.attn, dx);
  } else {
    const Index d = dx.cols();
    const Mat I = Mat::Identity(d, d), zero = Mat::Zero(1, d);
    const ops::AttentionWeights heads_only{p[in_w], p[in_b], I, zero, heads, causal};
    t = ops::linear_jvp(p[out_w], inner->jvp(p, c.inner, ops::attention_jvp(heads_only, c.attn, dx)));
  }
  return head_scale < 0 ? t : scale_columns(t, head_gains(p));
}

Jacobian Sublayer::attention_jacobian(const ParamStore& p, const SublayerCache& c) const {
  const Index n = c.attn.x.rows();
  Jacobian J;
  if (!inner) {
    J = ops::attention_jacobian(attention_weights(p), c.attn);
  } else {
    const Index d = c.attn.x.cols();
    const Mat I = Mat::Identity(d, d), zero = Mat::Zero(1, d);
    const ops::AttentionWeights heads_only{p[in_w], p[in_b], I, zero, heads, causal};
    // (W_out · J_inner) token-wise first, then one product with the dense heads Jacobian
    J = (ops::linear_jacobian(p[out_w], n) * inner->jacobian(p, c.inner)) * ops::attention_jacobian(heads_only, c.attn);
  }
  return head_scale < 0 ? J : diagonal_jacobian(head_gains(p), n) * J;
}

// ---- dispatch; feed-forward: y = linear2(MidNorm(act(linear1(x)))) ----

Mat Sublayer::forward(const ParamStore& p, const Mat& x, SublayerCache& c) const {
  if (kind == SublayerKind::Attention) return attention_forward(p, x, c);
  c.x = x;
  const Mat z1 = ops::linear_forward(x, p[w1], &p[b1]);  // (n, d_ff)
  c.a = ops::activation_forward(activation, z1);
  c.fprime = ops::activation_derivative(activation, z1);
  if (!mid) return ops::linear_forward(c.a, p[w2], &p[b2]);
  c.an = mid->forward(p, c.a, c.mid);
  return ops::linear_forward(c.an, p[w2], &p[b2]);
}

Mat Sublayer::vjp(const ParamStore& p, const SublayerCache& c, const Mat& dy, ParamGrads* g) const {
  if (kind == SublayerKind::Attention) return attention_vjp(p, c, dy, g);
  // in the forward pass this was: y = linear2(MidNorm(act(linear1(x))))
  Mat da = ops::linear_vjp(mid ? c.an : c.a, p[w2], dy, g ? &(*g)[w2] : nullptr, g ? &(*g)[b2] : nullptr);
  if (mid) da = mid->vjp(p, c.mid, da, g);
  const Mat dz = ops::activation_vjp(c.fprime, da);
  return ops::linear_vjp(c.x, p[w1], dz, g ? &(*g)[w1] : nullptr, g ? &(*g)[b1] : nullptr);
}

Mat Sublayer::jvp(const ParamStore& p, const SublayerCache& c, const Mat& dx) const {
  if (kind == SublayerKind::Attention) return attention_jvp(p, c, dx);
  Mat da = ops::activation_jvp(c.fprime, ops::linear_jvp(p[w1], dx));
  if (mid) da = mid->jvp(p, c.mid, da);
  return ops::linear_jvp(p[w2], da);
}

Jacobian Sublayer::jacobian(const ParamStore& p, const SublayerCache& c) const {
  if (kind == SublayerKind::Attention) return attention_jacobian(p, c);
  // token i: W2 · [J_mid,i ·] diag(act'(z1_i)) · W1   (d, d)
  const Index n = c.x.rows();
  std::vector<Mat> blocks(static_cast<size_t>(n));
  const Mat& W1 = p[w1];
  const Mat& W2 = p[w2];
  if (!mid) {
#pragma omp parallel for schedule(static)
    for (Index i = 0; i < n; ++i)
      blocks[static_cast<size_t>(i)].noalias() = W2 * (c.fprime.row(i).transpose().asDiagonal() * W1);
  } else {
    const Jacobian Jm = mid->jacobian(p, c.mid);  // token-wise (d_ff, d_ff) blocks
#pragma omp parallel for schedule(static)
    for (Index i = 0; i < n; ++i)
      blocks[static_cast<size_t>(i)].noalias() =
          (W2 * Jm.blocks()[static_cast<size_t>(i)]) * (c.fprime.row(i).transpose().asDiagonal() * W1);
  }
  return Jacobian::tokenwise(std::move(blocks));
}

}  // namespace gradflow
