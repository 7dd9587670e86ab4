// placements.cpp — the registry of normalization placements: each one a recipe over ResidualUnit.
// Sources and equations: ../shared/REFERENCES.md, docs/placements.md.
#include <cmath>

#include "gradflow/error.hpp"
#include "gradflow/model/placement.hpp"

namespace gradflow {
namespace {

UnitSpec unit(SublayerKind k, const ModelConfig& cfg) {
  UnitSpec u;
  u.kind = k;
  u.branch_scale = cfg.residual_scale;
  return u;
}
constexpr auto kA = SublayerKind::Attention;
constexpr auto kF = SublayerKind::FeedForward;

// Post-LN: h = LN1(x + λA(x)); y = LN2(h + λF(h))
std::vector<UnitSpec> post_block(const ModelConfig& cfg, Index) {
  UnitSpec a = unit(kA, cfg), f = unit(kF, cfg);
  a.post_norm = "norm1";
  f.post_norm = "norm2";
  return {a, f};
}

// Pre-LN: h = x + λA(LN1(x)); y = h + λF(LN2(h))
std::vector<UnitSpec> pre_block(const ModelConfig& cfg, Index) {
  UnitSpec a = unit(kA, cfg), f = unit(kF, cfg);
  a.pre_norm = "norm1";
  f.pre_norm = "norm2";
  return {a, f};
}

// Sandwich-LN: h = x + λLN3(A(LN1(x))); y = h + λLN4(F(LN2(h)))
std::vector<UnitSpec> sandwich_block(const ModelConfig& cfg, Index l) {
  auto units = pre_block(cfg, l);
  units[0].branch_norm = "norm3";
  units[1].branch_norm = "norm4";
  return units;
}

// DeepNorm: x = LN(α·x + λG(x)) for both sublayers
std::vector<UnitSpec> deepnorm_block(const ModelConfig& cfg, Index l) {
  auto units = post_block(cfg, l);
  for (auto& u : units) u.skip_scale = deepnorm_alpha(cfg);
  return units;
}

// ReZero: x = x + λ·a_l·G(x), one learnable a_l per layer shared by both sublayers, no norm
std::vector<UnitSpec> rezero_block(const ModelConfig& cfg, Index) {
  UnitSpec a = unit(kA, cfg), f = unit(kF, cfg);
  a.gate = f.gate = true;
  return {a, f};
}

// Mix-LN: K layers Post-LN (bottom for post-first, top for pre-first), the rest Pre-LN
std::vector<UnitSpec> mix_block(const ModelConfig& cfg, Index l) {
  return mix_layer_is_post(cfg, l) ? post_block(cfg, l) : pre_block(cfg, l);
}

bool always(const ModelConfig&) { return true; }
bool never(const ModelConfig&) { return false; }

}  // namespace

double deepnorm_alpha(const ModelConfig& cfg) {
  return cfg.deepnorm_alpha.value_or(std::pow(2.0 * static_cast<double>(cfg.layers), 0.25));
}
double deepnorm_beta(const ModelConfig& cfg) {
  return cfg.deepnorm_beta.value_or(std::pow(8.0 * static_cast<double>(cfg.layers), -0.25));
}

Index mix_post_layers(const ModelConfig& cfg) {
  // round(0.25·L), halves away from zero
  return cfg.mix_post_layers.value_or(static_cast<Index>(std::lround(0.25 * static_cast<double>(cfg.layers))));
}

bool mix_layer_is_post(const ModelConfig& cfg, Index l) {
  const Index K = mix_post_layers(cfg);
  return cfg.mix_order == "post-first" ? l < K : l >= cfg.layers - K;
}

const std::vector<PlacementInfo>& placements() {
  static const std::vector<PlacementInfo> table = {
      {"post", "h = LN1(x + A(x)); y = LN2(h + F(h))", "Vaswani et al. 2017, Attention Is All You Need",
       "--residual-scale", post_block, never},
      {"pre", "h = x + A(LN1(x)); y = h + F(LN2(h)); final LN", "Xiong et al. 2020; GPT-2 (Radford et al. 2019)",
       "--no-final-norm, --residual-scale", pre_block, always},
      {"sandwich", "h = x + LN3(A(LN1(x))); y = h + LN4(F(LN2(h))); final LN", "Ding et al. 2021, CogView",
       "--no-final-norm, --residual-scale", sandwich_block, always},
      {"deepnorm", "h = LN1(a*x + A(x)); y = LN2(a*h + F(h)); a = (2L)^(1/4), init beta = (8L)^(-1/4)",
       "Wang et al. 2022, DeepNet", "--deepnorm-alpha, --deepnorm-beta, --residual-scale", deepnorm_block, never},
      {"rezero", "h = x + a_l*A(x); y = h + a_l*F(h); no norm, a_l learnable, init --rezero-alpha (0)",
       "Bachlechner et al. 2020, ReZero is All You Need", "--rezero-alpha, --residual-scale", rezero_block, never},
      {"mix", "bottom K layers Post-LN, the rest Pre-LN (post-first; pre-first: top K); final LN if the top is Pre-LN",
       "Li et al. 2024, Mix-LN; the article's hybrid (C11)", "--mix-post-layers K, --mix-order post-first|pre-first",
       mix_block, [](const ModelConfig& c) { return !mix_layer_is_post(c, c.layers - 1); }},
  };
  return table;
}

const PlacementInfo& find_placement(const std::string& name) {
  std::string known;
  for (const auto& p : placements()) {
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  throw Error("unknown placement '" + name + "'; fix: use one of " + known + " (see `gradflow placements`)");
}

}  // namespace gradflow
