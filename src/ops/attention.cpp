// attention.cpp — multi-head self-attention: forward, VJP and JVP (see attention.hpp).
// Per head, with S = Q Kᵀ/√e and P = softmax_rows(S):
//   VJP: dP = dO Vᵀ, dV = Pᵀ dO, dS = P ⊙ (dP − rowsum(P ⊙ dP)), dQ = dS K/√e, dK = dSᵀ Q/√e
//   JVP: dS = (dQ Kᵀ + Q dKᵀ)/√e, dP = P ⊙ (dS − rowsum(P ⊙ dS)), dO = dP V + P dV
// The heads (between [Q | K | V] and O) are their own functions, which the whole op calls. All through the kernels.
#include "gradflow/ops/attention.hpp"

#include <cmath>

#include "gradflow/core/error.hpp"
#include "gradflow/ops/elementwise.hpp"
#include "gradflow/ops/linear.hpp"

namespace gradflow::ops {
namespace {
// head h's Q, K and V columns of [Q | K | V] (n, 3d) as GEMM operands (e columns each, leading dimension 3d)
struct HeadOperands {
  GemmOperand Q, K, V;
};
HeadOperands head_operands(const Mat& qkv, Index h, Index e) {
  const Index d = qkv.cols() / 3, ld = qkv.cols();
  const double* q = qkv.data() + h * e;
  return {{q, ld}, {q + d, ld}, {q + 2 * d, ld}};
}
GemmOperand t(GemmOperand a) {
  a.transposed = true;
  return a;
}
}  // namespace

Mat attention_forward(const AttentionWeights& w, const Mat& x, AttentionCache& c, const KernelOps& k) {
  c.x = x;
  c.qkv = linear_forward(x, w.in_w, w.in_b, k);
  attention_heads_forward(w.heads, w.causal, c, k);
  return linear_forward(c.O, w.out_w, w.out_b, k);
}

void attention_heads_forward(Index heads, bool causal, AttentionCache& c, const KernelOps& k) {
  const Index n = c.x.rows(), d = c.x.cols(), e = d / heads;
  const double inv_sqrt_e = 1.0 / std::sqrt(static_cast<double>(e));
  c.P.assign(static_cast<size_t>(heads), Mat());
  c.O.resize(n, d);
  // The heads are independent: one per thread, each writing its own columns of O (inside a parallel region each
  // head's products run on its own thread; src/linalg/blas_threads.cpp makes that the same bits as splitting them).
#pragma omp parallel for schedule(static)
  for (Index h = 0; h < heads; ++h) {
    const auto [Q, K, V] = head_operands(c.qkv, h, e);
    Mat S(n, n);
    k.gemm(n, n, e, inv_sqrt_e, Q, t(K), 0.0, S.data(), n, 0, 1);  // S = Q Kᵀ/√e
    k.softmax_rows(S.data(), n, n, causal);
    k.gemm(n, e, n, 1.0, {S.data(), n}, V, 0.0, c.O.data() + h * e, d, 0, 1);  // O_h = P V
    c.P[static_cast<size_t>(h)] = std::move(S);
  }
}

Mat attention_vjp(const AttentionWeights& w, const AttentionCache& c, const Mat& dA, const AttentionGrads& g,
                  const KernelOps& k) {
  const Index copies = dA.rows() / c.x.rows();
  if ((g.in_w || g.out_w) && copies != 1)
    throw Error("internal: parameter gradients need a single cotangent", ErrorKind::Internal);
  // in the forward pass this was: A = O W_outᵀ + b_out
  const Mat dO = linear_vjp(c.O, w.out_w, dA, g.out_w, g.out_b, k);
  // in the forward pass this was: [Q | K | V] = x W_inᵀ + b_in
  return linear_vjp(c.x, w.in_w, attention_heads_vjp(w.heads, c, dO, k), g.in_w, g.in_b, k);
}

Mat attention_heads_vjp(Index heads, const AttentionCache& c, const Mat& dO, const KernelOps& k) {
  const Index n = c.x.rows(), d = c.x.cols(), e = d / heads, copies = dO.rows() / n;
  const double inv_sqrt_e = 1.0 / std::sqrt(static_cast<double>(e));
  Mat dqkv(dO.rows(), 3 * d);
  // every (cotangent, head) pair on its own thread, writing its own block of dqkv (see attention_heads_forward)
#pragma omp parallel for schedule(static)
  for (Index pair = 0; pair < copies * heads; ++pair) {
    const Index cp = pair / heads, h = pair % heads;
    const auto [Q, K, V] = head_operands(c.qkv, h, e);
    const Mat& P = c.P[static_cast<size_t>(h)];
    const GemmOperand dOh{dO.data() + cp * n * d + h * e, d};
    double* out = dqkv.data() + cp * n * 3 * d + h * e;  // this pair's dQ; dK at + d, dV at + 2d
    // in the forward pass this was: O_h = P V
    Mat dS(n, n);
    k.gemm(n, n, e, 1.0, dOh, t(V), 0.0, dS.data(), n, 0, 1);                 // dP = dO_h Vᵀ
    k.gemm(n, e, n, 1.0, t({P.data(), n}), dOh, 0.0, out + 2 * d, 3 * d, 0, 1);  // dV = Pᵀ dO_h
    // in the forward pass this was: P = softmax(S): dS = P ⊙ (dP − rowsum(P ⊙ dP)) / √e, in place
    k.softmax_vjp(P.data(), n, dS.data(), 1, inv_sqrt_e);
    // in the forward pass this was: S = Q Kᵀ / √e
    k.gemm(n, e, n, 1.0, {dS.data(), n}, K, 0.0, out, 3 * d, 0, 1);         // dQ = dS K
    k.gemm(n, e, n, 1.0, t({dS.data(), n}), Q, 0.0, out + d, 3 * d, 0, 1);  // dK = dSᵀ Q
  }
  return dqkv;
}

Mat attention_heads_jvp(Index heads, const AttentionCache& c, const Mat& dqkv, const KernelOps& k) {
  const Index n = c.x.rows(), d = c.x.cols(), e = d / heads, copies = dqkv.rows() / n;
  const double inv_sqrt_e = 1.0 / std::sqrt(static_cast<double>(e));
  Mat dO(dqkv.rows(), d);
  // every (tangent, head) pair on its own thread (see attention_heads_forward)
#pragma omp parallel for schedule(static)
  for (Index pair = 0; pair < copies * heads; ++pair) {
    const Index cp = pair / heads, h = pair % heads;
    const auto [Q, K, V] = head_operands(c.qkv, h, e);
    const Mat& P = c.P[static_cast<size_t>(h)];
    const double* tq = dqkv.data() + cp * n * 3 * d + h * e;
    const GemmOperand dQ{tq, 3 * d}, dK{tq + d, 3 * d}, dV{tq + 2 * d, 3 * d};
    // dS = (dQ Kᵀ + Q dKᵀ)/√e; dP = P ⊙ (dS − rowsum(P ⊙ dS)), in place
    Mat dS(n, n);
    k.gemm(n, n, e, 1.0, dQ, t(K), 0.0, dS.data(), n, 0, 1);
    k.gemm(n, n, e, 1.0, Q, t(dK), 1.0, dS.data(), n, 0, 1);
    k.axpby(dS.size(), inv_sqrt_e, dS.data(), 0.0, dS.data());
    k.softmax_vjp(P.data(), n, dS.data(), 1, 1.0);
    // dO_h = dP V + P dV
    double* out = dO.data() + cp * n * d + h * e;
    k.gemm(n, e, n, 1.0, {dS.data(), n}, V, 0.0, out, d, 0, 1);
    k.gemm(n, e, n, 1.0, {P.data(), n}, dV, 1.0, out, d, 0, 1);
  }
  return dO;
}

Mat attention_jvp(const AttentionWeights& w, const AttentionCache& c, const Mat& dx, const KernelOps& k) {
  return linear_jvp(w.out_w, attention_heads_jvp(w.heads, c, linear_jvp(w.in_w, dx, k), k), k);
}

Mat attention_param_jvp(const AttentionWeights& w, const AttentionCache& c, const Mat& dx, const AttentionTangents& dp,
                        const KernelOps& k) {
  // [Q | K | V] = x W_inᵀ + b_in;  A = O W_outᵀ + b_out
  const Mat dqkv = added(linear_jvp(w.in_w, dx, k), linear_param_jvp(c.x, dp.in_w, dp.in_b, w.in_w.rows(), k), k);
  return added(linear_jvp(w.out_w, attention_heads_jvp(w.heads, c, dqkv, k), k),
               linear_param_jvp(c.O, dp.out_w, dp.out_b, w.out_w.rows(), k), k);
}

}  // namespace gradflow::ops
