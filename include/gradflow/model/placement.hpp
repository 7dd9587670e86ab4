// placement.hpp — where the normalization sits: each scheme is a short recipe of ResidualUnit specs
// (one for attention, one for the feed-forward sublayer) plus whether a final norm follows the stack.
// All schemes are registered in one table (src/model/placements.cpp); docs/placements.md documents them.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "gradflow/model/config.hpp"
#include "gradflow/model/residual_unit.hpp"

namespace gradflow {

struct PlacementInfo {
  std::string name;      // --placement NAME
  std::string equation;  // one line, e.g. "h = LN1(x + A(x)); y = LN2(h + F(h))"
  std::string paper;     // citation
  std::string options;   // the options that tune it
  std::function<std::vector<UnitSpec>(const ModelConfig&, Index layer)> block;  // units of block `layer`
  std::function<bool(const ModelConfig&)> final_norm_default;
};

const std::vector<PlacementInfo>& placements();
const PlacementInfo& find_placement(const std::string& name);  // Error listing the known names

// DeepNet's encoder-only constants: α = (2L)^(1/4), β = (8L)^(-1/4), unless overridden.
double deepnorm_alpha(const ModelConfig& cfg);
double deepnorm_beta(const ModelConfig& cfg);
// Sub-LN (Magneto, encoder-only; torchscale): γ = sqrt(ln 2L) multiplies v_proj, out_proj, linear1, linear2 weights.
double subln_gamma(const ModelConfig& cfg);
// T-Fixup (Huang et al. 2020, encoder): 0.67·L^(-1/4) multiplies v_proj, out_proj, linear1, linear2 weights.
double tfixup_scale(const ModelConfig& cfg);
// B2T (takase/b2t_connection rescaling_init): L^(-1/2) multiplies every weight matrix of a block.
double b2t_scale(const ModelConfig& cfg);
// Mix-LN: number of Post-LN layers K (default round(0.25·L)) and whether layer l is one of them.
Index mix_post_layers(const ModelConfig& cfg);
bool mix_layer_is_post(const ModelConfig& cfg, Index layer);

}  // namespace gradflow
