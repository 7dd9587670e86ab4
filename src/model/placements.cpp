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

// Admin: x = LN(ω ⊙ x + λG(x)), ω a learnable (d) vector per sublayer, profiled by one forward pass
// (profile_initialization in init.hpp); names as admin-torch's as_parameter example.
std::vector<UnitSpec> admin_block(const ModelConfig& cfg, Index l) {
  auto units = post_block(cfg, l);
  units[0].skip_param = "attn_omega";
  units[1].skip_param = "ffn_omega";
  return units;
}

// B2T: h = LN1(x + λA(x)); y = LN2(h + λF(h) + x)   (takase/b2t_connection: residual_bottom_to_top)
std::vector<UnitSpec> b2t_block(const ModelConfig& cfg, Index l) {
  auto units = post_block(cfg, l);
  units[1].add_block_input = true;
  return units;
}

// Pre-LN with no norm at all: T-Fixup's architecture (use with --init t-fixup)
std::vector<UnitSpec> nonorm_block(const ModelConfig& cfg, Index) { return {unit(kA, cfg), unit(kF, cfg)}; }

// NormFormer (fairseq names): h = x + λ attn_ln(c_attn ⊙ A(LN1(x)));
//                             y = w_resid ⊙ h + λ linear2(ffn_layernorm(act(linear1(LN2(h)))))
std::vector<UnitSpec> normformer_block(const ModelConfig& cfg, Index l) {
  auto units = pre_block(cfg, l);
  units[0].branch_norm = "attn_ln";
  units[0].head_scale = "c_attn";
  units[1].mid_norm = "ffn_layernorm";
  units[1].skip_param = "w_resid";
  return units;
}

// Sub-LN (Magneto; torchscale names): h = x + λ out_proj(inner_attn_ln(heads(LN1(x))));
//                                     y = h + λ linear2(ffn_layernorm(act(linear1(LN2(h)))))
std::vector<UnitSpec> subln_block(const ModelConfig& cfg, Index l) {
  auto units = pre_block(cfg, l);
  units[0].inner_norm = "self_attn.inner_attn_ln";
  units[1].mid_norm = "ffn_layernorm";
  return units;
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

double subln_gamma(const ModelConfig& cfg) { return std::sqrt(std::log(2.0 * static_cast<double>(cfg.layers))); }
double tfixup_scale(const ModelConfig& cfg) { return 0.67 * std::pow(static_cast<double>(cfg.layers), -0.25); }
double b2t_scale(const ModelConfig& cfg) { return 1.0 / std::sqrt(static_cast<double>(cfg.layers)); }

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
      {"admin", "h = LN1(w1*x + A(x)); y = LN2(w2*h + F(h)); w per feature, profiled by one forward pass",
       "Liu et al. 2020, Understanding the Difficulty of Training Transformers (Admin)", "--residual-scale",
       admin_block, never},
      {"b2t", "h = LN1(x + A(x)); y = LN2(h + F(h) + x); init: weight matrices x L^(-1/2)",
       "Takase et al. 2023, B2T Connection: Serving Stability and Performance in Deep Transformers",
       "--residual-scale", b2t_block, never},
      {"normformer",
       "h = x + LN3(c*A(LN1(x))); y = w*h + F'(LN2(h)), F' with LN(d_ff) after act, c per head, w per feature; final LN",
       "Shleifer et al. 2021, NormFormer", "--no-final-norm, --residual-scale", normformer_block, always},
      {"sub-ln",
       "h = x + A'(LN1(x)), LN before out_proj; y = h + F'(LN2(h)), LN(d_ff) before linear2; final LN; init: gamma = sqrt(ln 2L)",
       "Wang et al. 2022, Foundation Transformers (Magneto)", "--no-final-norm, --residual-scale", subln_block,
       always},
      {"nonorm", "h = x + A(x); y = h + F(h); no norm (T-Fixup's architecture: use with --init t-fixup)",
       "Huang et al. 2020, Improving Transformer Optimization Through Better Initialization (T-Fixup)",
       "--residual-scale", nonorm_block, never},
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
