// attention_jacobian.cpp — the explicit (n·d, n·d) Jacobian of multi-head self-attention, assembled from
// its token-pair blocks (see attention.hpp and docs/math.md), not from n·d VJPs. For head h:
//   block(i, j) += P_ij · (M_h + (u_j − w_i) r_iᵀ),  M_h = W_o,h W_v,h,  u_j = W_o,h V_j,  w_i = W_o,h O_i,
//                                                    r_i = W_k,hᵀ q_i / √e
//   block(i, i) += W_o,h C_i W_q,h / √e,             C_i = Σ_k P_ik (V_k − O_i) k_kᵀ
// Rows of blocks are independent: parallel over i, identical results for any thread count.
#include <cmath>

#include "gradflow/ops/attention.hpp"

namespace gradflow::ops {

Jacobian attention_jacobian(const AttentionWeights& w, const AttentionCache& c) {
  const Index n = c.x.rows(), d = c.x.cols(), e = d / w.heads;
  const double inv_sqrt_e = 1.0 / std::sqrt(static_cast<double>(e));
  Mat J = Mat::Zero(n * d, n * d);
  // Per-head quantities shared by all token pairs.
  std::vector<Mat> M(static_cast<size_t>(w.heads)), U(M.size()), Wr(M.size()), R(M.size()), QW(M.size());
  for (Index h = 0; h < w.heads; ++h) {
    const auto Wq = w.in_w.middleRows(h * e, e);           // (e, d)
    const auto Wk = w.in_w.middleRows(d + h * e, e);       // (e, d)
    const auto Wv = w.in_w.middleRows(2 * d + h * e, e);   // (e, d)
    const auto Wo = w.out_w.middleCols(h * e, e);          // (d, e)
    const auto Q = c.qkv.middleCols(h * e, e);
    const auto V = c.qkv.middleCols(2 * d + h * e, e);
    const size_t hs = static_cast<size_t>(h);
    M[hs] = Wo * Wv;                                        // (d, d)
    U[hs] = V * Wo.transpose();                             // (n, d) rows u_j
    Wr[hs] = c.O.middleCols(h * e, e) * Wo.transpose();     // (n, d) rows w_i
    R[hs] = (Q * Wk) * inv_sqrt_e;                          // (n, d) rows r_i
    QW[hs] = Wq * inv_sqrt_e;                               // (e, d)
  }
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) {
    for (Index h = 0; h < w.heads; ++h) {
      const size_t hs = static_cast<size_t>(h);
      const Mat& P = c.P[hs];
      const auto K = c.qkv.middleCols(d + h * e, e);
      const auto V = c.qkv.middleCols(2 * d + h * e, e);
      const auto Wo = w.out_w.middleCols(h * e, e);
      const RowVec Oi = c.O.block(i, h * e, 1, e);
      for (Index j = 0; j < n; ++j) {
        const double p = P(i, j);
        if (p == 0.0) continue;  // masked (causal) or underflowed: the whole block term vanishes
        auto blk = J.block(i * d, j * d, d, d);
        blk += p * M[hs];
        blk.noalias() += (p * (U[hs].row(j) - Wr[hs].row(i))).transpose() * R[hs].row(i);
      }
      // C_i = Σ_k P_ik (V_k − O_i) k_kᵀ  (e, e)
      Mat Ci = Mat::Zero(e, e);
      for (Index k = 0; k < n; ++k) {
        const double p = P(i, k);
        if (p == 0.0) continue;
        Ci.noalias() += (p * (V.row(k) - Oi)).transpose() * K.row(k);
      }
      J.block(i * d, i * d, d, d).noalias() += Wo * (Ci * QW[hs]);
    }
  }
  return Jacobian::dense(std::move(J), n);
}

}  // namespace gradflow::ops
