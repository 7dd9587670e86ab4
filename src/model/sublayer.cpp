// sublayer.cpp — attention and feed-forward branches over the ops (see sublayer.hpp).
#include "gradflow/model/sublayer.hpp"

#include "gradflow/ops/linear.hpp"

namespace gradflow {

ops::AttentionWeights Sublayer::attention_weights(const ParamStore& p) const {
  return ops::AttentionWeights{p[in_w], p[in_b], p[out_w], p[out_b], heads, causal};
}

Mat Sublayer::forward(const ParamStore& p, const Mat& x, SublayerCache& c) const {
  if (kind == SublayerKind::Attention) return ops::attention_forward(attention_weights(p), x, c.attn);
  c.x = x;
  const Mat z1 = ops::linear_forward(x, p[w1], &p[b1]);  // (n, d_ff)
  c.a = ops::activation_forward(activation, z1);
  c.fprime = ops::activation_derivative(activation, z1);
  return ops::linear_forward(c.a, p[w2], &p[b2]);
}

Mat Sublayer::vjp(const ParamStore& p, const SublayerCache& c, const Mat& dy, ParamGrads* g) const {
  if (kind == SublayerKind::Attention) {
    ops::AttentionGrads ag;
    if (g) ag = {&(*g)[in_w], &(*g)[in_b], &(*g)[out_w], &(*g)[out_b]};
    return ops::attention_vjp(attention_weights(p), c.attn, dy, ag);
  }
  // in the forward pass this was: y = linear2(act(linear1(x)))
  const Mat da = ops::linear_vjp(c.a, p[w2], dy, g ? &(*g)[w2] : nullptr, g ? &(*g)[b2] : nullptr);
  const Mat dz = ops::activation_vjp(c.fprime, da);
  return ops::linear_vjp(c.x, p[w1], dz, g ? &(*g)[w1] : nullptr, g ? &(*g)[b1] : nullptr);
}

Mat Sublayer::jvp(const ParamStore& p, const SublayerCache& c, const Mat& dx) const {
  if (kind == SublayerKind::Attention) return ops::attention_jvp(attention_weights(p), c.attn, dx);
  return ops::linear_jvp(p[w2], ops::activation_jvp(c.fprime, ops::linear_jvp(p[w1], dx)));
}

Jacobian Sublayer::jacobian(const ParamStore& p, const SublayerCache& c) const {
  if (kind == SublayerKind::Attention) return ops::attention_jacobian(attention_weights(p), c.attn);
  // token i: W2 · diag(act'(z1_i)) · W1   (d, d)
  const Index n = c.x.rows();
  std::vector<Mat> blocks(static_cast<size_t>(n));
  const Mat& W1 = p[w1];
  const Mat& W2 = p[w2];
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i)
    blocks[static_cast<size_t>(i)].noalias() = W2 * (c.fprime.row(i).transpose().asDiagonal() * W1);
  return Jacobian::tokenwise(std::move(blocks));
}

}  // namespace gradflow
