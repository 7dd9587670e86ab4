// feed_forward_sublayer.cpp — y = linear2(MidNorm(act(linear1(x)))), token by token (sublayer.hpp).
#include "gradflow/model/sublayer.hpp"
#include "gradflow/ops/elementwise.hpp"
#include "gradflow/ops/linear.hpp"

namespace gradflow {

FeedForwardSublayer::FeedForwardSublayer(int w1, int b1, int w2, int b2, Activation activation)
    : w1_(w1), b1_(b1), w2_(w2), b2_(b2), activation_(activation) {}

Mat FeedForwardSublayer::forward(const ParamStore& p, const Mat& x, SublayerCache& cache) const {
  const KernelOps& k = *kernels;
  auto& c = cache.emplace<FeedForwardCache>();
  c.x = x;
  const Mat z1 = ops::linear_forward(x, p[w1_], &p[b1_], k);  // (n, d_ff)
  c.a = ops::activation_forward(activation_, z1, k);
  c.fprime = ops::activation_derivative(activation_, z1, k);
  if (!mid) return ops::linear_forward(c.a, p[w2_], &p[b2_], k);
  c.an = mid->forward(p, c.a, c.mid);
  return ops::linear_forward(c.an, p[w2_], &p[b2_], k);
}

Mat FeedForwardSublayer::vjp(const ParamStore& p, const SublayerCache& cache, const Mat& dy, ParamGrads* g) const {
  const KernelOps& k = *kernels;
  const auto& c = std::get<FeedForwardCache>(cache);
  // in the forward pass this was: y = linear2(MidNorm(act(linear1(x))))
  Mat da = ops::linear_vjp(mid ? c.an : c.a, p[w2_], dy, g ? &(*g)[w2_] : nullptr, g ? &(*g)[b2_] : nullptr, k);
  if (mid) da = mid->vjp(p, c.mid, da, g);
  const Mat dz = ops::activation_vjp(c.fprime, da, k);
  return ops::linear_vjp(c.x, p[w1_], dz, g ? &(*g)[w1_] : nullptr, g ? &(*g)[b1_] : nullptr, k);
}

Mat FeedForwardSublayer::jvp(const ParamStore& p, const SublayerCache& cache, const Mat& dx) const {
  const KernelOps& k = *kernels;
  const auto& c = std::get<FeedForwardCache>(cache);
  Mat da = ops::activation_jvp(c.fprime, ops::linear_jvp(p[w1_], dx, k), k);
  if (mid) da = mid->jvp(p, c.mid, da);
  return ops::linear_jvp(p[w2_], da, k);
}

Mat FeedForwardSublayer::jvp_with_params(const ParamStore& p, const SublayerCache& cache, const Mat& dx,
                                         const ParamGrads& dtheta) const {
  const KernelOps& k = *kernels;
  const auto& c = std::get<FeedForwardCache>(cache);
  // z1 = x W1ᵀ + b1;  a = act(z1);  y = MidNorm(a) W2ᵀ + b2
  const Mat dz1 = ops::added(ops::linear_jvp(p[w1_], dx, k),
                             ops::linear_param_jvp(c.x, &dtheta[w1_], &dtheta[b1_], p[w1_].rows(), k), k);
  Mat da = ops::activation_jvp(c.fprime, dz1, k);
  if (mid) da = mid->jvp_with_params(p, c.mid, da, dtheta);
  return ops::added(ops::linear_jvp(p[w2_], da, k),
                    ops::linear_param_jvp(mid ? c.an : c.a, &dtheta[w2_], &dtheta[b2_], p[w2_].rows(), k), k);
}

Jacobian FeedForwardSublayer::jacobian(const ParamStore& p, const SublayerCache& cache) const {
  const auto& c = std::get<FeedForwardCache>(cache);
  // token i: W2 · [J_mid,i ·] diag(act'(z1_i)) · W1   (d, d)
  const Index n = c.x.rows();
  std::vector<Mat> blocks(static_cast<size_t>(n));
  const Mat& W1 = p[w1_];
  const Mat& W2 = p[w2_];
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
