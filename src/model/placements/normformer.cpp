// normformer.cpp — NormFormer (Shleifer et al. 2021; fairseq names): h = x + λ attn_ln(c_attn ⊙ A(LN1(x)));
// y = w_resid ⊙ h + λ linear2(ffn_layernorm(act(linear1(LN2(h))))); c_attn per head and w_resid per feature
// start at 1; a final LN.
#include "model/placements/recipes.hpp"

namespace gradflow {
namespace {

class NormFormer final : public Placement {
 public:
  std::string name() const override { return "normformer"; }
  std::string display_name() const override { return "NormFormer"; }
  std::string equation() const override {
    return "h = x + LN3(c*A(LN1(x))); y = w*h + F'(LN2(h)), F' with LN(d_ff) after act, c per head, w per feature; "
           "final LN";
  }
  std::string paper() const override { return "Shleifer et al. 2021, NormFormer"; }
  std::vector<UnitSpec> block(const ModelConfig& cfg, Index) const override {
    auto units = recipes::pre_block(cfg);
    units[0].branch_norm = "attn_ln";
    units[0].head_scale = "c_attn";
    units[1].mid_norm = "ffn_layernorm";
    units[1].skip_param = "w_resid";
    return units;
  }
  bool final_norm_default(const ModelConfig&) const override { return true; }
};

}  // namespace

std::unique_ptr<Placement> make_normformer_placement() { return std::make_unique<NormFormer>(); }

}  // namespace gradflow
