// attention.cpp — multi-head self-attention: forward, VJP and JVP (see attention.hpp); grouped-query heads, any
// logit scale and a soft-cap (HeadsSpec).
// Per head, with S = Q Kᵀ/√e and P = softmax_rows(S):
//   VJP: dP = dO Vᵀ, dV = Pᵀ dO, dS = P ⊙ (dP − rowsum(P ⊙ dP)), dQ = dS K/√e, dK = dSᵀ Q/√e
//   JVP: dS = (dQ Kᵀ + Q dKᵀ)/√e, dP = P ⊙ (dS − rowsum(P ⊙ dS)), dO = dP V + P dV
// The heads (between [Q | K | V] and O) are their own functions, which the whole op calls. All through the kernels.
#include "gradflow/ops/attention.hpp"

#include <cmath>

#include "gradflow/core/error.hpp"
#include "gradflow/ops/elementwise.hpp"
#include "gradflow/ops/linear.hpp"
#include "gradflow/kernels/row_math.hpp"

namespace gradflow::ops {
namespace {
// Query head h's columns of [Q | K | V] and its key/value head's (GQA: g = h / (h/K)) as GEMM operands (e columns
// each, leading dimension (h + 2K)·e); the stacked copy cp's rows start cp·n rows down.
struct HeadOperands {
  GemmOperand Q, K, V;
};
HeadOperands head_operands(const HeadsSpec& s, const double* qkv, Index h) {
  const Index e = s.head_dim, ld = s.qkv_width(), g = h / (s.heads / s.kv_heads);
  const double* q = qkv + h * e;
  const double* kv = qkv + s.q_width() + g * e;
  return {{q, ld}, {kv, ld}, {kv + s.kv_width(), ld}};
}
GemmOperand t(GemmOperand a) {
  a.transposed = true;
  return a;
}
// T = C·tanh(S/C) in place, dT/dS = 1 − tanh²(S/C) into slope (Gemma-2's attention logit soft-cap)
void soft_cap(double C, Mat& S, Mat& slope, const KernelOps& k) {
  Mat Z(S.rows(), S.cols());
  slope.resize(S.rows(), S.cols());
  k.axpby(S.size(), 1.0 / C, S.data(), 0.0, Z.data());
  k.activation(rows::kTanh, Z.data(), Z.size(), S.data(), slope.data());
  k.axpby(S.size(), C, S.data(), 0.0, S.data());
}
}  // namespace

HeadsSpec HeadsSpec::classic(Index heads, Index d, bool causal) {
  HeadsSpec s;
  s.heads = s.kv_heads = heads;
  s.head_dim = d / heads;
  s.scale = 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  s.causal = causal;
  return s;
}

bool HeadsSpec::is_classic(Index d) const {
  const HeadsSpec c = classic(heads, d, causal);
  return kv_heads == heads && head_dim * heads == d && scale == c.scale && softcap == 0.0;
}

Mat attention_forward(const AttentionWeights& w, const Mat& x, AttentionCache& c, const KernelOps& k) {
  c.x = x;
  c.qkv = linear_forward(x, w.in_w, w.in_b, k);
  attention_heads_forward(w.heads, c, k);
  return linear_forward(c.O, w.out_w, w.out_b, k);
}

void attention_heads_forward(const HeadsSpec& s, AttentionCache& c, const KernelOps& k) {
  const Index n = c.x.rows(), e = s.head_dim, qw = s.q_width();
  c.P.assign(static_cast<size_t>(s.heads), Mat());
  c.cap_slope.assign(s.softcap > 0 ? static_cast<size_t>(s.heads) : 0, Mat());
  c.O.resize(n, qw);
  // The heads are independent: one per thread, each writing its own columns of O (inside a parallel region each
  // head's products run on its own thread; src/linalg/blas_threads.cpp makes that the same bits as splitting them).
#pragma omp parallel for schedule(static)
  for (Index h = 0; h < s.heads; ++h) {
    const auto [Q, K, V] = head_operands(s, c.qkv.data(), h);
    Mat S(n, n);
    k.gemm(n, n, e, s.scale, Q, t(K), 0.0, S.data(), n, 0, 1);  // S = scale · Q Kᵀ
    if (s.softcap > 0) soft_cap(s.softcap, S, c.cap_slope[static_cast<size_t>(h)], k);
    k.softmax_rows(S.data(), n, n, s.causal);
    k.gemm(n, e, n, 1.0, {S.data(), n}, V, 0.0, c.O.data() + h * e, qw, 0, 1);  // O_h = P V
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

Mat attention_heads_vjp(const HeadsSpec& s, const AttentionCache& c, const Mat& dO, const KernelOps& k) {
  const Index n = c.x.rows(), e = s.head_dim, qw = s.q_width(), ld = s.qkv_width(), copies = dO.rows() / n;
  const Index group = s.heads / s.kv_heads;  // query heads per key/value head
  Mat dqkv(dO.rows(), ld);
  // every (cotangent, key/value head) pair on its own thread, writing its own block of dqkv (see
  // attention_heads_forward); the group's query heads in order, adding into their shared dK and dV
#pragma omp parallel for schedule(static)
  for (Index pair = 0; pair < copies * s.kv_heads; ++pair) {
    const Index cp = pair / s.kv_heads, g = pair % s.kv_heads;
    double* base = dqkv.data() + cp * n * ld;
    Mat dS(n, n);
    for (Index j = 0; j < group; ++j) {
      const Index h = g * group + j;
      const auto [Q, K, V] = head_operands(s, c.qkv.data(), h);
      const Mat& P = c.P[static_cast<size_t>(h)];
      const GemmOperand dOh{dO.data() + cp * n * qw + h * e, qw};
      double* dQ = base + h * e;
      double* dK = base + qw + g * e;
      double* dV = dK + s.kv_width();
      const double beta = j == 0 ? 0.0 : 1.0;  // the group's first head writes dK, dV; the others add
      // in the forward pass this was: O_h = P V
      k.gemm(n, n, e, 1.0, dOh, t(V), 0.0, dS.data(), n, 0, 1);          // dP = dO_h Vᵀ
      k.gemm(n, e, n, 1.0, t({P.data(), n}), dOh, beta, dV, ld, 0, 1);  // dV += Pᵀ dO_h
      if (s.softcap > 0) {
        // in the forward pass this was: P = softmax(T), T = C·tanh(S/C), S = scale · Q Kᵀ
        k.softmax_vjp(P.data(), n, dS.data(), 1, 1.0);
        k.multiply_tiled(dS.data(), c.cap_slope[static_cast<size_t>(h)].data(), n, n, n);
        k.axpby(dS.size(), s.scale, dS.data(), 0.0, dS.data());
      } else {
        // in the forward pass this was: P = softmax(S): dS = scale · P ⊙ (dP − rowsum(P ⊙ dP)), in place
        k.softmax_vjp(P.data(), n, dS.data(), 1, s.scale);
      }
      // in the forward pass this was: S = scale · Q Kᵀ (scale already in dS)
      k.gemm(n, e, n, 1.0, {dS.data(), n}, K, 0.0, dQ, ld, 0, 1);           // dQ = dS K
      k.gemm(n, e, n, 1.0, t({dS.data(), n}), Q, beta, dK, ld, 0, 1);       // dK += dSᵀ Q
    }
  }
  return dqkv;
}

Mat attention_heads_jvp(const HeadsSpec& s, const AttentionCache& c, const Mat& dqkv, const KernelOps& k) {
  const Index n = c.x.rows(), e = s.head_dim, qw = s.q_width(), ld = s.qkv_width(), copies = dqkv.rows() / n;
  Mat dO(dqkv.rows(), qw);
  // every (tangent, head) pair on its own thread (see attention_heads_forward)
#pragma omp parallel for schedule(static)
  for (Index pair = 0; pair < copies * s.heads; ++pair) {
    const Index cp = pair / s.heads, h = pair % s.heads;
    const auto [Q, K, V] = head_operands(s, c.qkv.data(), h);
    const auto [dQ, dK, dV] = head_operands(s, dqkv.data() + cp * n * ld, h);
    const Mat& P = c.P[static_cast<size_t>(h)];
    // dS = scale·(dQ Kᵀ + Q dKᵀ) [⊙ dT/dS]; dP = P ⊙ (dS − rowsum(P ⊙ dS)), in place
    Mat dS(n, n);
    k.gemm(n, n, e, 1.0, dQ, t(K), 0.0, dS.data(), n, 0, 1);
    k.gemm(n, n, e, 1.0, Q, t(dK), 1.0, dS.data(), n, 0, 1);
    k.axpby(dS.size(), s.scale, dS.data(), 0.0, dS.data());
    if (s.softcap > 0) k.multiply_tiled(dS.data(), c.cap_slope[static_cast<size_t>(h)].data(), n, n, n);
    k.softmax_vjp(P.data(), n, dS.data(), 1, 1.0);
    // dO_h = dP V + P dV
    double* out = dO.data() + cp * n * qw + h * e;
    k.gemm(n, e, n, 1.0, {dS.data(), n}, V, 0.0, out, qw, 0, 1);
    k.gemm(n, e, n, 1.0, {P.data(), n}, dV, 1.0, out, qw, 0, 1);
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
