// sub_ln.cpp — Sub-LN (Wang et al. 2022, Foundation Transformers / Magneto; torchscale names, encoder-only):
// h = x + λ out_proj(inner_attn_ln(heads(LN1(x)))); y = h + λ linear2(ffn_layernorm(act(linear1(LN2(h)))));
// a final LN; at init γ = sqrt(ln 2L) multiplies the v rows of in_proj, out_proj, linear1 and linear2.
#include <cmath>

#include "model/placements/recipes.hpp"

namespace gradflow {
namespace {

class SubLN final : public Placement {
 public:
  std::string name() const override { return "sub-ln"; }
  std::string display_name() const override { return "Sub-LN"; }
  std::string equation() const override {
    return "h = x + A'(LN1(x)), LN before out_proj; y = h + F'(LN2(h)), LN(d_ff) before linear2; final LN; "
           "init: gamma = sqrt(ln 2L)";
  }
  std::string paper() const override { return "Wang et al. 2022, Foundation Transformers (Magneto)"; }
  std::vector<UnitSpec> block(const ModelConfig& cfg, Index) const override {
    auto units = recipes::pre_block(cfg);
    units[0].inner_norm = "self_attn.inner_attn_ln";
    units[1].mid_norm = "ffn_layernorm";
    return units;
  }
  bool final_norm_default(const ModelConfig&) const override { return true; }
  void rescale_initial(const ModelConfig& cfg, ParamRole r, Index /*d*/, Mat& v) const override {
    recipes::scale_v_out_ffn(r, cfg, v, gamma(cfg));
  }
  void constants(const ModelConfig& cfg, nlohmann::ordered_json& j) const override { j["subln_gamma"] = gamma(cfg); }

 private:
  static double gamma(const ModelConfig& cfg) { return std::sqrt(std::log(2.0 * static_cast<double>(cfg.layers))); }
};

}  // namespace

std::unique_ptr<Placement> make_sub_ln_placement() { return std::make_unique<SubLN>(); }

}  // namespace gradflow
