// recipes.hpp — the building blocks the placement entries share: a unit with the residual scale λ, and the
// Post-LN and Pre-LN blocks most schemes start from. Private to src/model/placements/.
#pragma once
#include <vector>

#include "gradflow/model/config.hpp"
#include "gradflow/model/placement.hpp"
#include "gradflow/model/residual_unit.hpp"

namespace gradflow::recipes {

constexpr auto kA = SublayerKind::Attention;
constexpr auto kF = SublayerKind::FeedForward;

// A unit of kind k with no norm: z = x + λ·G(x), λ = --residual-scale × the parametrization's branch multiplier
// m_L^(-α) (1 under sp and mup).
inline UnitSpec unit(SublayerKind k, const ModelConfig& cfg) {
  UnitSpec u;
  u.kind = k;
  u.branch_scale = cfg.residual_scale * cfg.branch_multiplier();
  return u;
}

// Post-LN: h = LN1(x + λA(x)); y = LN2(h + λF(h))
inline std::vector<UnitSpec> post_block(const ModelConfig& cfg) {
  UnitSpec a = unit(kA, cfg), f = unit(kF, cfg);
  a.post_norm = "norm1";
  f.post_norm = "norm2";
  return {a, f};
}

// Pre-LN: h = x + λA(LN1(x)); y = h + λF(LN2(h))
inline std::vector<UnitSpec> pre_block(const ModelConfig& cfg) {
  UnitSpec a = unit(kA, cfg), f = unit(kF, cfg);
  a.pre_norm = "norm1";
  f.pre_norm = "norm2";
  return {a, f};
}

// The weight matrices of a block: in_proj, out_proj, linear1, linear2 (and a gated branch's linear3).
inline bool is_weight_matrix(ParamRole r) {
  return r == ParamRole::InProjWeight || r == ParamRole::OutProjWeight || r == ParamRole::Linear1Weight ||
         r == ParamRole::Linear2Weight || r == ParamRole::Linear3Weight;
}

// Multiplies the weights the DeepNet and Magneto reference codes rescale at init by k: the v rows of in_proj
// (the last K·e rows: 2d..3d for classic heads), out_proj, linear1 and linear2 (a gated branch's linear3 with linear1: the feed-forward's inputs).
inline void scale_v_out_ffn(ParamRole r, const ModelConfig& cfg, Mat& v, double k) {
  if (r == ParamRole::InProjWeight) v.bottomRows(cfg.kv() * cfg.hd()) *= k;  // v_proj: the last K·e rows
  if (r == ParamRole::OutProjWeight || r == ParamRole::Linear1Weight || r == ParamRole::Linear2Weight ||
      r == ParamRole::Linear3Weight)
    v *= k;
}

}  // namespace gradflow::recipes
