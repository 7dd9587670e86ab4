// pre.cpp — Pre-LN (Xiong et al. 2020; GPT-2): h = x + λA(LN1(x)); y = h + λF(LN2(h)); a final LN.
#include "model/placements/recipes.hpp"

namespace gradflow {
namespace {

class PreLN final : public Placement {
 public:
  std::string name() const override { return "pre"; }
  std::string display_name() const override { return "Pre-LN"; }
  std::string equation() const override { return "h = x + A(LN1(x)); y = h + F(LN2(h)); final LN"; }
  std::string paper() const override { return "Xiong et al. 2020; GPT-2 (Radford et al. 2019)"; }
  std::vector<UnitSpec> block(const ModelConfig& cfg, Index) const override { return recipes::pre_block(cfg); }
  bool final_norm_default(const ModelConfig&) const override { return true; }
};

}  // namespace

std::unique_ptr<Placement> make_pre_placement() { return std::make_unique<PreLN>(); }

}  // namespace gradflow
