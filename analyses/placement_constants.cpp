// placement_constants.cpp — the constants a placement recipe used, as the model holds them: DeepNet's α and β,
// Sub-LN's γ, B2T's init scale, mix's K, and per block ReZero's gate α_l and Admin's profiled ω
// (attn_omega, ffn_omega: one value per sublayer, every entry of the (d) vector equal at initialization).
#include "gradflow/analysis/analysis.hpp"
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
    const ParamStore& p = ctx.model.params();
    Json c = Json::object();
    c["placement"] = cfg.placement;
    if (cfg.placement == "deepnorm") {
      c["deepnorm_alpha"] = deepnorm_alpha(cfg);
      c["deepnorm_beta"] = deepnorm_beta(cfg);
    }
    if (cfg.placement == "sub-ln") c["subln_gamma"] = subln_gamma(cfg);
    if (cfg.placement == "b2t") c["b2t_init_scale"] = b2t_scale(cfg);
    if (cfg.placement == "mix") {
      c["mix_post_layers"] = mix_post_layers(cfg);
      c["mix_order"] = cfg.mix_order;
    }
    c["residual_scale"] = cfg.residual_scale;
    for (Index l = 0; l < ctx.model.layers(); ++l) {
      Json& layer = report["layers"][static_cast<size_t>(l)];
      const std::string pre = Model::layer_prefix(l);
      if (p.has(pre + "resweight")) layer["rezero_alpha"] = p.at(pre + "resweight")(0, 0);
      if (p.has(pre + "attn_omega"))
        layer["admin_omega"] = {{"attn", p.at(pre + "attn_omega")(0, 0)}, {"ffn", p.at(pre + "ffn_omega")(0, 0)}};
      if (cfg.placement == "mix") layer["post_ln"] = mix_layer_is_post(cfg, l);
    }
    report["placement_constants"] = std::move(c);
  }
};

}  // namespace

std::unique_ptr<Analysis> make_placement_constants() { return std::make_unique<PlacementConstants>(); }

}  // namespace gradflow
