// placement_constants.cpp — the constants a placement recipe used, as its entry reports them (placement.hpp:
// constants, layer_constants): DeepNet's α and β, Sub-LN's γ, B2T's init scale, mix's K and order, and per block
// ReZero's gate α_l, Admin's profiled ω (attn_omega, ffn_omega: one value per sublayer, every entry of the (d)
// vector equal at initialization) and whether a mix block is Post-LN.
#include "gradflow/run/analysis.hpp"
#include "gradflow/model/placement.hpp"

namespace gradflow {
namespace {

class PlacementConstants final : public Analysis {
 public:
  std::string name() const override { return "placement-constants"; }
  std::string description() const override {
    return "the scheme's constants: deepnorm alpha/beta, sub-ln gamma, init scales, rezero gates, admin omegas";
  }
  void run(const AnalysisContext& ctx, Json& report) const override {
    const ModelConfig& cfg = ctx.model.config();
    const Placement& placement = find_placement(cfg.placement);
    Json c = Json::object();
    c["placement"] = cfg.placement;
    placement.constants(cfg, c);
    c["residual_scale"] = cfg.residual_scale;
    for (Index l = 0; l < ctx.model.layers(); ++l)
      placement.layer_constants(ctx.model, l, report["layers"][static_cast<size_t>(l)]);
    report["placement_constants"] = std::move(c);
  }
};

}  // namespace

std::unique_ptr<Analysis> make_placement_constants() { return std::make_unique<PlacementConstants>(); }

}  // namespace gradflow
