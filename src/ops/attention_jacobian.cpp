// attention_jacobian.cpp — the explicit (n·d, n·d) Jacobian of multi-head self-attention, assembled from
// its token-pair blocks (see attention.hpp and docs/math.md), not from n·d VJPs. For head h:
//   block(i, j) += P_ij · (M_h + (u_j − w_i) r_iᵀ),  M_h = W_o,h W_v,h,  u_j = W_o,h V_j,  w_i = W_o,h O_i,
//                                                    r_i = W_k,hᵀ q_i / √e
//   block(i, i) += W_o,h C_i W_q,h / √e,             C_i = Σ_k P_ik (V_k − O_i) k_kᵀ
// Rows of blocks are independent: parallel over i, identical results for any thread count. Assembled as one
// small GEMM per output row (i, a), see below, so the 8·N² bytes of J are written once.
#include <cmath>
#include <vector>

#include "gradflow/ops/attention.hpp"

namespace gradflow::ops {

Jacobian attention_jacobian(const AttentionWeights& w, const AttentionCache& c) {
  const Index n = c.x.rows(), d = c.x.cols(), H = w.heads.heads, e = d / H, N = n * d;
  const double inv_sqrt_e = 1.0 / std::sqrt(static_cast<double>(e));
  // Per-head quantities shared by all token pairs.
  std::vector<Mat> M(static_cast<size_t>(H)), U(M.size()), Wr(M.size()), R(M.size()), QW(M.size());
  for (Index h = 0; h < H; ++h) {
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
  // Mrow[a] (2H, d): rows 0..H−1 hold row a of M_0..M_{H−1}; rows H..2H−1 are filled per token i with r_i.
  std::vector<Mat> Mrow(static_cast<size_t>(d), Mat(2 * H, d));
  for (Index a = 0; a < d; ++a)
    for (Index h = 0; h < H; ++h) Mrow[static_cast<size_t>(a)].row(h) = M[static_cast<size_t>(h)].row(a);

  // Block row i of J (rows i·d + a, columns j·d + b) is, for each a, one contiguous (n, d) slab
  //   slab_a[j, b] = Σ_h P_ij M_h[a, b] + Σ_h P_ij (u_j[a] − w_i[a]) r_i[b] = L_a · [M_{·,a}; r_i],
  // with L_a (n, 2H) = [P_{i,·}ᵀ per head | P_ij (u_j[a] − w_i[a]) per head]: one small GEMM per (i, a), every
  // entry of J written once (no zero fill). Masked pairs have P_ij = 0 and contribute exact zeros.
  Mat J(N, N);
#pragma omp parallel
  {
    Mat L(n, 2 * H), right(2 * H, d), A(n, d);
    std::vector<Mat> diffs(static_cast<size_t>(H));
#pragma omp for schedule(static)
    for (Index i = 0; i < n; ++i) {
      for (Index h = 0; h < H; ++h) {
        const size_t hs = static_cast<size_t>(h);
        const auto Pi = c.P[hs].row(i).transpose();          // (n) probabilities of query i
        L.col(h) = Pi;
        // diffs_h[j, a] = P_ij (u_j[a] − w_i[a])
        diffs[hs].noalias() = Pi.asDiagonal() * (U[hs].rowwise() - Wr[hs].row(i));
      }
      for (Index a = 0; a < d; ++a) {
        for (Index h = 0; h < H; ++h) L.col(H + h) = diffs[static_cast<size_t>(h)].col(a);
        right.topRows(H) = Mrow[static_cast<size_t>(a)].topRows(H);
        for (Index h = 0; h < H; ++h) right.row(H + h) = R[static_cast<size_t>(h)].row(i);
        Eigen::Map<Mat> slab(J.data() + (i * d + a) * N, n, d);
        slab.noalias() = L * right;
      }
      // the diagonal block's extra term, through the query: Σ_h W_o,h C_i W_q,h/√e
      for (Index h = 0; h < H; ++h) {
        const size_t hs = static_cast<size_t>(h);
        const Mat& P = c.P[hs];
        const auto K = c.qkv.middleCols(d + h * e, e);
        const auto V = c.qkv.middleCols(2 * d + h * e, e);
        const auto Wo = w.out_w.middleCols(h * e, e);
        const RowVec Oi = c.O.block(i, h * e, 1, e);
        // C_i = Σ_k P_ik (V_k − O_i) k_kᵀ = (V − 1 O_i)ᵀ diag(P_i) K   (e, e)
        const Mat Ci = (V.rowwise() - Oi).transpose() * (P.row(i).transpose().asDiagonal() * K);
        J.block(i * d, i * d, d, d).noalias() += Wo * (Ci * QW[hs]);
      }
    }
  }
  return Jacobian::dense(std::move(J), n);
}

}  // namespace gradflow::ops
