// sandwich.cpp — Sandwich-LN (Ding et al. 2021, CogView): h = x + λLN3(A(LN1(x))); y = h + λLN4(F(LN2(h)));
// a final LN.
#include "model/placements/recipes.hpp"

namespace gradflow {
namespace {

class Sandwich final : public Placement {
 public:
  std::string name() const override { return "sandwich"; }
  std::string display_name() const override { return "Sandwich-LN"; }
  std::string equation() const override { return "h = x + LN3(A(LN1(x))); y = h + LN4(F(LN2(h))); final LN"; }
  std::string paper() const override { return "Ding et al. 2021, CogView"; }
  std::vector<UnitSpec> block(const ModelConfig& cfg, Index) const override {
    auto units = recipes::pre_block(cfg);
    units[0].branch_norm = "norm3";
    units[1].branch_norm = "norm4";
    return units;
  }
  bool final_norm_default(const ModelConfig&) const override { return true; }
};

}  // namespace

std::unique_ptr<Placement> make_sandwich_placement() { return std::make_unique<Sandwich>(); }

}  // namespace gradflow
