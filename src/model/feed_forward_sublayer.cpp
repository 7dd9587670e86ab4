// feed_forward_sublayer.cpp — y = linear2(MidNorm(a)), a = act(linear1(x)) or, gated, act(linear1(x)) ⊙ linear3(x),
// token by token (sublayer.hpp). A bias whose index is -1 is absent (--bias off).
#include "gradflow/model/sublayer.hpp"
#include "gradflow/ops/elementwise.hpp"
#include "gradflow/ops/linear.hpp"

namespace gradflow {

FeedForwardSublayer::FeedForwardSublayer(int w1, int b1, int w2, int b2, Activation activation, int w3, int b3)
    : w1_(w1), b1_(b1), w2_(w2), b2_(b2), w3_(w3), b3_(b3), activation_(activation) {}

void FeedForwardSublayer::hidden_forward(const ParamStore& p, const Mat& x, FeedForwardCache& c) const {
  const KernelOps& k = *kernels;
  const Mat z1 = ops::linear_forward(x, p[w1_], param_or_null(p, b1_), k);  // (n, d_ff)
  if (gated()) {
    const Mat z3 = ops::linear_forward(x, p[w3_], param_or_null(p, b3_), k);
    c.a = ops::glu_forward(activation_, z1, z3, c.glu, k);
    return;
  }
  c.a = ops::activation_forward(activation_, z1, k);
  c.fprime = ops::activation_derivative(activation_, z1, k);
}

Mat FeedForwardSublayer::forward(const ParamStore& p, const Mat& x, SublayerCache& cache) const {
  const KernelOps& k = *kernels;
  auto& c = cache.emplace<FeedForwardCache>();
  c.x = x;
  hidden_forward(p, x, c);
  if (!mid) return ops::linear_forward(c.a, p[w2_], param_or_null(p, b2_), k);
  c.an = mid->forward(p, c.a, c.mid);
  return ops::linear_forward(c.an, p[w2_], param_or_null(p, b2_), k);
}

Mat FeedForwardSublayer::vjp(const ParamStore& p, const SublayerCache& cache, const Mat& dy, ParamGrads* g) const {
  const KernelOps& k = *kernels;
  const auto& c = std::get<FeedForwardCache>(cache);
  // in the forward pass this was: y = linear2(MidNorm(a))
  Mat da = ops::linear_vjp(mid ? c.an : c.a, p[w2_], dy, grad_or_null(g, w2_), grad_or_null(g, b2_), k);
  if (mid) da = mid->vjp(p, c.mid, da, g);
  if (!gated()) {
    // in the forward pass this was: a = act(z1), z1 = linear1(x)
    const Mat dz = ops::activation_vjp(c.fprime, std::move(da), k);
    return ops::linear_vjp(c.x, p[w1_], dz, grad_or_null(g, w1_), grad_or_null(g, b1_), k);
  }
  // in the forward pass this was: a = act(z1) ⊙ z3, z1 = linear1(x), z3 = linear3(x)
  const auto [dz1, dz3] = ops::glu_vjp(c.glu, da, k);
  return ops::added(ops::linear_vjp(c.x, p[w1_], dz1, grad_or_null(g, w1_), grad_or_null(g, b1_), k),
                    ops::linear_vjp(c.x, p[w3_], dz3, grad_or_null(g, w3_), grad_or_null(g, b3_), k),
                    input_kernels());
}

Mat FeedForwardSublayer::jvp(const ParamStore& p, const SublayerCache& cache, const Mat& dx) const {
  const KernelOps& k = *kernels;
  const auto& c = std::get<FeedForwardCache>(cache);
  Mat da = gated() ? ops::glu_jvp(c.glu, ops::linear_jvp(p[w1_], dx, k), ops::linear_jvp(p[w3_], dx, k), k)
                   : ops::activation_jvp(c.fprime, ops::linear_jvp(p[w1_], dx, k), k);
  if (mid) da = mid->jvp(p, c.mid, da);
  return ops::linear_jvp(p[w2_], da, k);
}

Mat FeedForwardSublayer::jvp_with_params(const ParamStore& p, const SublayerCache& cache, const Mat& dx,
                                         const ParamGrads& dtheta) const {
  const KernelOps& k = *kernels;
  const auto& c = std::get<FeedForwardCache>(cache);
  // z1 = x W1ᵀ + b1 (z3 = x W3ᵀ + b3);  a = act(z1) [⊙ z3];  y = MidNorm(a) W2ᵀ + b2
  const auto linear_tangent = [&](int w, int b) {
    return ops::added(ops::linear_jvp(p[w], dx, k),
                      ops::linear_param_jvp(c.x, &dtheta[w], tangent_or_null(dtheta, b), p[w].rows(), k), k);
  };
  Mat da = gated() ? ops::glu_jvp(c.glu, linear_tangent(w1_, b1_), linear_tangent(w3_, b3_), k)
                   : ops::activation_jvp(c.fprime, linear_tangent(w1_, b1_), k);
  if (mid) da = mid->jvp_with_params(p, c.mid, da, dtheta);
  return ops::added(ops::linear_jvp(p[w2_], da, k),
                    ops::linear_param_jvp(mid ? c.an : c.a, &dtheta[w2_], tangent_or_null(dtheta, b2_),
                                          p[w2_].rows(), k),
                    k);
}

Jacobian FeedForwardSublayer::jacobian(const ParamStore& p, const SublayerCache& cache) const {
  const auto& c = std::get<FeedForwardCache>(cache);
  // token i: W2 · [J_mid,i ·] H_i, H_i = diag(act'(z1_i)) · W1, or gated diag(z3_i ⊙ act'(z1_i)) · W1 +
  // diag(act(z1_i)) · W3   (d_ff, d)
  const Index n = c.x.rows();
  std::vector<Mat> blocks(static_cast<size_t>(n));
  const Mat& W1 = p[w1_];
  const Mat& W2 = p[w2_];
  const std::optional<Jacobian> Jm = mid ? std::optional<Jacobian>(mid->jacobian(p, c.mid)) : std::nullopt;  // (d_ff, d_ff) per token
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) {
    Mat H;
    if (gated())
      H.noalias() = c.glu.up_fprime.row(i).transpose().asDiagonal() * W1 +
                    c.glu.gate.row(i).transpose().asDiagonal() * p[w3_];
    else
      H.noalias() = c.fprime.row(i).transpose().asDiagonal() * W1;
    if (mid) blocks[static_cast<size_t>(i)].noalias() = (W2 * Jm->blocks()[static_cast<size_t>(i)]) * H;
    else blocks[static_cast<size_t>(i)].noalias() = W2 * H;
  }
  return Jacobian::tokenwise(std::move(blocks));
}

}  // namespace gradflow
