// attention_decoder_jacobian.cpp — the decoder attention branch's explicit Jacobian in closed form (docs/math.md §14):
// grouped-query heads of any width, a logit scale s and soft-cap slope D, with [Q | K | V] = RoPE(N(x W_inᵀ + b_in)).
// Per token j, M_j = ∂qkv_j/∂x_j = R_j · J_N,j · W_in ((h + 2K)·e, d): the rotation, the QK-norm blocks and in_proj.
// Per query head h (key/value head g) and token pair (i, j), with P, D, q, k, v, O the forward pass's:
//   ∂O_h,i/∂x_j = P_ij·Mv_g,j + s·P_ij·D_ij·(v_j − O_i)(q_iᵀ Mk_g,j) + δ_ij·C_h,i·Mq_h,i,
//   C_h,i = s·Σ_m P_im·D_im·(v_m − O_i) k_mᵀ,
// assembled into the dense (n·h·e, n·d) Jacobian of O, then one token-wise product with the output map (W_out, or
// W_out·J_inner,i under an inner norm). O(n²·h·e·d + n·d²·h·e) against n·d JVPs; checked against finite differences,
// J·v vs JVP and uᵀJ vs VJP with every placement (tests/model/test_model_derivatives.cpp).
#include "gradflow/model/sublayer.hpp"

namespace gradflow {

Jacobian AttentionSublayer::decoder_jacobian(const ParamStore& p, const AttentionBranchCache& c) const {
  const ops::HeadsSpec& s = spec_;
  const Index n = c.attn.x.rows(), d = c.attn.x.cols(), e = s.head_dim, qw = s.q_width(), kvw = s.kv_width();
  const Index group = s.heads / s.kv_heads;
  const Mat& qkv = c.attn.qkv;
  // the norms' token-wise blocks, per part of [Q | K | V] (per head: one block per (token, head); whole: per token)
  const Index starts[3] = {0, qw, qw + kvw}, widths[3] = {qw, kvw, kvw};
  std::array<std::optional<Jacobian>, 3> norm_j;
  for (size_t part = 0; part < 3; ++part)
    if (qkv_norm[part]) norm_j[part] = qkv_norm[part]->jacobian(p, c.qkv[part]);
  const std::optional<Jacobian> rope_j =
      rotary_dim > 0 ? std::optional<Jacobian>(ops::rope_jacobian(c.rope)) : std::nullopt;
  std::vector<Mat> M(static_cast<size_t>(n));
#pragma omp parallel for schedule(static)
  for (Index j = 0; j < n; ++j) {
    Mat m = p[in_w_];  // (w, d)
    for (size_t part = 0; part < 3; ++part) {
      if (!norm_j[part]) continue;
      const Index heads = widths[part] / e;
      if (qkv_norm_whole) {
        m.middleRows(starts[part], widths[part]) = norm_j[part]->blocks()[static_cast<size_t>(j)] *
                                                   m.middleRows(starts[part], widths[part]);
      } else {
        for (Index hh = 0; hh < heads; ++hh)
          m.middleRows(starts[part] + hh * e, e) =
              norm_j[part]->blocks()[static_cast<size_t>(j * heads + hh)] * m.middleRows(starts[part] + hh * e, e);
      }
    }
    if (rope_j) m = rope_j->blocks()[static_cast<size_t>(j)] * m;
    M[static_cast<size_t>(j)] = std::move(m);
  }
  // the dense Jacobian of O (n·qw, n·d), one block row (token i) per thread
  Mat JO = Mat::Zero(n * qw, n * d);
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) {
    for (Index h = 0; h < s.heads; ++h) {
      const Index g = h / group, r0 = i * qw + h * e;
      const Mat& P = c.attn.P[static_cast<size_t>(h)];
      const Mat* D = s.softcap > 0 ? &c.attn.cap_slope[static_cast<size_t>(h)] : nullptr;
      const RowVec q = qkv.block(i, h * e, 1, e), o = c.attn.O.block(i, h * e, 1, e);
      Mat C = Mat::Zero(e, e);
      for (Index j = 0; j < n; ++j) {
        const double pij = P(i, j);
        if (pij == 0.0) continue;  // masked (causal) or underflowed: no path
        const double slope = s.scale * pij * (D ? (*D)(i, j) : 1.0);
        const RowVec k = qkv.block(j, qw + g * e, 1, e), vmo = qkv.block(j, qw + kvw + g * e, 1, e) - o;
        const Mat& Mj = M[static_cast<size_t>(j)];
        auto blk = JO.block(r0, j * d, e, d);
        blk.noalias() += pij * Mj.middleRows(qw + kvw + g * e, e);                       // through v_j
        blk.noalias() += (slope * vmo.transpose()) * (q * Mj.middleRows(qw + g * e, e));  // through k_j
        C.noalias() += (slope * vmo.transpose()) * k;                                     // through q_i, below
      }
      JO.block(r0, i * d, e, d).noalias() += C * M[static_cast<size_t>(i)].middleRows(h * e, e);
    }
  }
  // a = O' W_outᵀ + b_out with O' = O or InnerNorm(O): the token-wise output map
  std::vector<Mat> out(static_cast<size_t>(n));
  if (inner) {
    const Jacobian Ji = inner->jacobian(p, c.inner);
    for (Index i = 0; i < n; ++i) out[static_cast<size_t>(i)].noalias() = p[out_w_] * Ji.blocks()[static_cast<size_t>(i)];
  } else {
    for (Index i = 0; i < n; ++i) out[static_cast<size_t>(i)] = p[out_w_];
  }
  return Jacobian::tokenwise(std::move(out)) * Jacobian::dense(std::move(JO), n);
}

}  // namespace gradflow
