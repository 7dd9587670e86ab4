// lns.cpp — LayerNorm Scaling (Sun et al. 2025, "The Curse of Depth in Large Language Models"; reference code
// lmsdss/LayerNorm-Scaling, peft_pretraining/modeling_llama.py, NORM_TYPE=LNS): Pre-LN with each norm's output
// multiplied by 1/√l, l = layer_index + 1 (the first block is plain Pre-LN): h = x + λA(LN1(x)/√l);
// y = h + λF(LN2(h)/√l); a final norm, not scaled.
#include <cmath>

#include "model/placements/recipes.hpp"

namespace gradflow {
namespace {

class LayerNormScaling final : public Placement {
 public:
  std::string name() const override { return "lns"; }
  std::string display_name() const override { return "LNS"; }
  std::string equation() const override {
    return "h = x + A(LN1(x)/sqrt(l)); y = h + F(LN2(h)/sqrt(l)), l = 1..L the block's index from 1; final LN "
           "(not scaled)";
  }
  std::string paper() const override { return "Sun et al. 2025, The Curse of Depth in Large Language Models"; }
  std::vector<UnitSpec> block(const ModelConfig& cfg, Index layer) const override {
    auto units = recipes::pre_block(cfg);
    for (auto& u : units) u.pre_norm_scale = scale(layer);
    return units;
  }
  bool final_norm_default(const ModelConfig&) const override { return true; }
  void layer_constants(const Model&, Index layer, nlohmann::ordered_json& j) const override {
    j["lns_scale"] = scale(layer);
  }

 private:
  // 1/√l with l counted from 1, exactly as the reference code's 1 / math.sqrt(self.layer_index + 1)
  static double scale(Index layer) { return 1.0 / std::sqrt(static_cast<double>(layer + 1)); }
};

}  // namespace

std::unique_ptr<Placement> make_lns_placement() { return std::make_unique<LayerNormScaling>(); }

}  // namespace gradflow
