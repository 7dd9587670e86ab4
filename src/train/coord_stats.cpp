// coord_stats.cpp — see coord_stats.hpp.
#include "gradflow/train/coord_stats.hpp"

#include <variant>

#include "gradflow/model/sublayer.hpp"

namespace gradflow {

void CoordStats::add(const CoordStats& o) {
  const auto sum = [](std::vector<MeanAbs>& a, const std::vector<MeanAbs>& b) {
    if (a.empty()) a.resize(b.size());
    for (size_t i = 0; i < b.size(); ++i) a[i].add(b[i]);
  };
  sum(stream, o.stream);
  sum(attn_branch, o.attn_branch);
  sum(ffn_branch, o.ffn_branch);
  sum(attn_logits, o.attn_logits);
  output_logits.add(o.output_logits);
}

namespace {

// |S| of one attention's heads over the kept pairs: S = scale·Q_j K_gᵀ, g = ⌊j·K/h⌋ (qkv as the heads read them)
void add_logits(const ops::AttentionCache& a, const ops::HeadsSpec& h, MeanAbs& out) {
  const Index n = a.qkv.rows(), e = h.head_dim;
  for (Index j = 0; j < h.heads; ++j) {
    const Index g = j * h.kv_heads / h.heads;
    const Mat S = h.scale * (a.qkv.middleCols(j * e, e) * a.qkv.middleCols(h.q_width() + g * e, e).transpose());
    for (Index r = 0; r < n; ++r) {
      const Index kept = h.causal ? r + 1 : n;  // the causal mask keeps the pairs at or before the query
      out.sum += S.row(r).head(kept).cwiseAbs().sum();
      out.count += static_cast<double>(kept);
    }
  }
}

}  // namespace

CoordStats coord_stats(const Model& model, const Trace& t, const Mat& z) {
  const Index L = model.layers();
  CoordStats s;
  s.stream.resize(static_cast<size_t>(L));
  s.attn_branch.resize(static_cast<size_t>(L));
  s.ffn_branch.resize(static_cast<size_t>(L));
  s.attn_logits.resize(static_cast<size_t>(L));
  for (Index l = 0; l < L; ++l) {
    const size_t k = static_cast<size_t>(l);
    s.stream[k].add(t.x[k + 1]);
    const auto& units = model.block(l);
    for (size_t u = 0; u < units.size(); ++u) {
      const UnitCache& c = t.blocks[k].units[u];
      const bool attention = units[u].spec.kind == SublayerKind::Attention;
      (attention ? s.attn_branch : s.ffn_branch)[k].add(Mat(units[u].branch_coefficient(model.params()) * c.b));
      if (attention) {
        const auto* a = dynamic_cast<const AttentionSublayer*>(units[u].G.get());
        const auto* ac = std::get_if<AttentionBranchCache>(&c.g);
        if (a && ac) add_logits(ac->attn, a->heads_spec(), s.attn_logits[k]);
      }
    }
  }
  s.output_logits.add(z);
  return s;
}

}  // namespace gradflow
