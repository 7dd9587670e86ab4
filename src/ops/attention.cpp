// attention.cpp — multi-head self-attention: forward, VJP and JVP (see attention.hpp).
// Per head, with S = Q Kᵀ/√e and P = softmax_rows(S):
//   VJP: dP = dO Vᵀ, dV = Pᵀ dO, dS = P ⊙ (dP − rowsum(P ⊙ dP)), dQ = dS K/√e, dK = dSᵀ Q/√e
//   JVP: dS = (dQ Kᵀ + Q dKᵀ)/√e, dP = P ⊙ (dS − rowsum(P ⊙ dS)), dO = dP V + P dV
// The heads (between [Q | K | V] and O) are their own functions, which the whole op calls.
#include "gradflow/ops/attention.hpp"

#include <cmath>
#include <limits>

#include "gradflow/core/error.hpp"
#include "gradflow/ops/linear.hpp"

namespace gradflow::ops {
namespace {
// Row-wise softmax of S in place, keys j > i masked when causal.
void softmax_rows(Mat& S, bool causal) {
  const Index n = S.rows();
  for (Index i = 0; i < n; ++i) {
    const Index len = causal ? i + 1 : S.cols();
    const double m = S.row(i).head(len).maxCoeff();
    double z = 0.0;
    for (Index j = 0; j < len; ++j) z += (S(i, j) = std::exp(S(i, j) - m));
    S.row(i).head(len) /= z;
    if (len < S.cols()) S.row(i).tail(S.cols() - len).setZero();
  }
}

// head h's probabilities and its Q, K, V columns of the cache (e = d / heads columns each)
struct HeadView {
  const Mat& P;
  Mat::ConstColsBlockXpr Q, K, V;
};
HeadView head_view(const AttentionCache& c, Index h, Index e) {
  const Index d = c.x.cols();
  return {c.P[static_cast<size_t>(h)], c.qkv.middleCols(h * e, e), c.qkv.middleCols(d + h * e, e),
          c.qkv.middleCols(2 * d + h * e, e)};
}
}  // namespace

Mat attention_forward(const AttentionWeights& w, const Mat& x, AttentionCache& c) {
  c.x = x;
  c.qkv = linear_forward(x, w.in_w, &w.in_b);
  attention_heads_forward(w.heads, w.causal, c);
  return linear_forward(c.O, w.out_w, &w.out_b);
}

void attention_heads_forward(Index heads, bool causal, AttentionCache& c) {
  const Index n = c.x.rows(), d = c.x.cols(), e = d / heads;
  const double inv_sqrt_e = 1.0 / std::sqrt(static_cast<double>(e));
  c.P.assign(static_cast<size_t>(heads), Mat());
  c.O.resize(n, d);
  // The heads are independent: one per thread, each writing its own columns of O (inside a parallel region each
  // head's products run on its own thread; src/linalg/blas_threads.cpp makes that the same bits as splitting them).
#pragma omp parallel for schedule(static)
  for (Index h = 0; h < heads; ++h) {
    const auto Q = c.qkv.middleCols(h * e, e);
    const auto K = c.qkv.middleCols(d + h * e, e);
    const auto V = c.qkv.middleCols(2 * d + h * e, e);
    Mat S = (Q * K.transpose()) * inv_sqrt_e;
    softmax_rows(S, causal);
    c.O.middleCols(h * e, e).noalias() = S * V;
    c.P[static_cast<size_t>(h)] = std::move(S);
  }
}

Mat attention_vjp(const AttentionWeights& w, const AttentionCache& c, const Mat& dA, const AttentionGrads& g) {
  const Index k = dA.rows() / c.x.rows();
  if ((g.in_w || g.out_w) && k != 1) throw Error("internal: parameter gradients need a single cotangent", ErrorKind::Internal);
  // in the forward pass this was: A = O W_outᵀ + b_out
  const Mat dO = linear_vjp(c.O, w.out_w, dA, g.out_w, g.out_b);
  // in the forward pass this was: [Q | K | V] = x W_inᵀ + b_in
  return linear_vjp(c.x, w.in_w, attention_heads_vjp(w.heads, c, dO), g.in_w, g.in_b);
}

Mat attention_heads_vjp(Index heads, const AttentionCache& c, const Mat& dO) {
  const Index n = c.x.rows(), d = c.x.cols(), e = d / heads, k = dO.rows() / n;
  const double inv_sqrt_e = 1.0 / std::sqrt(static_cast<double>(e));
  Mat dqkv(dO.rows(), 3 * d);
  // every (cotangent, head) pair on its own thread, writing its own block of dqkv (see attention_heads_forward)
#pragma omp parallel for schedule(static)
  for (Index pair = 0; pair < k * heads; ++pair) {
    const Index cp = pair / heads, h = pair % heads;
    const auto [P, Q, K, V] = head_view(c, h, e);
    const auto dOh = dO.block(cp * n, h * e, n, e);
    // in the forward pass this was: O_h = P V
    const Mat dP = dOh * V.transpose();
    dqkv.block(cp * n, 2 * d + h * e, n, e).noalias() = P.transpose() * dOh;
    // in the forward pass this was: P = softmax(S)
    const Vec rs = P.cwiseProduct(dP).rowwise().sum();
    const Mat dS = P.cwiseProduct(dP - rs.replicate(1, n)) * inv_sqrt_e;
    // in the forward pass this was: S = Q Kᵀ / √e
    dqkv.block(cp * n, h * e, n, e).noalias() = dS * K;
    dqkv.block(cp * n, d + h * e, n, e).noalias() = dS.transpose() * Q;
  }
  return dqkv;
}

Mat attention_heads_jvp(Index heads, const AttentionCache& c, const Mat& dqkv) {
  const Index n = c.x.rows(), d = c.x.cols(), e = d / heads, k = dqkv.rows() / n;
  const double inv_sqrt_e = 1.0 / std::sqrt(static_cast<double>(e));
  Mat dO(dqkv.rows(), d);
  // every (tangent, head) pair on its own thread (see attention_heads_forward)
#pragma omp parallel for schedule(static)
  for (Index pair = 0; pair < k * heads; ++pair) {
    const Index cp = pair / heads, h = pair % heads;
    const auto [P, Q, K, V] = head_view(c, h, e);
    const auto dQ = dqkv.block(cp * n, h * e, n, e);
    const auto dK = dqkv.block(cp * n, d + h * e, n, e);
    const auto dV = dqkv.block(cp * n, 2 * d + h * e, n, e);
    const Mat dS = (dQ * K.transpose() + Q * dK.transpose()) * inv_sqrt_e;
    const Vec rs = P.cwiseProduct(dS).rowwise().sum();
    const Mat dP = P.cwiseProduct(dS - rs.replicate(1, n));
    dO.block(cp * n, h * e, n, e).noalias() = dP * V + P * dV;
  }
  return dO;
}

Mat attention_jvp(const AttentionWeights& w, const AttentionCache& c, const Mat& dx) {
  return linear_jvp(w.out_w, attention_heads_jvp(w.heads, c, linear_jvp(w.in_w, dx)));
}

Mat attention_param_jvp(const AttentionWeights& w, const AttentionCache& c, const Mat& dx, const AttentionTangents& dp) {
  // [Q | K | V] = x W_inᵀ + b_in;  A = O W_outᵀ + b_out
  const Mat dqkv = linear_jvp(w.in_w, dx) + linear_param_jvp(c.x, dp.in_w, dp.in_b, w.in_w.rows());
  return linear_jvp(w.out_w, attention_heads_jvp(w.heads, c, dqkv)) + linear_param_jvp(c.O, dp.out_w, dp.out_b, w.out_w.rows());
}

}  // namespace gradflow::ops
