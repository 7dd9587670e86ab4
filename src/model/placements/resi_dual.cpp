// resi_dual.cpp — ResiDual (Xie et al. 2023; microsoft/ResiDual, resi_dual_layers.py and resi_dual.py): two
// streams from x_a = x_d = x_0. Every sublayer f: x_a ← LN(x_a + λf(x_a)), x_d ← x_d + λf(x_a); the output
// y = x_a + LN_f(x_d) (the reference's enc_alpha = enc_res_input_norm_scale = 1, their defaults). The block
// state is the pair [x_a | x_d] (Model::state_width() = 2d), so B_l is 2N × 2N and P_l is N × 2N.
#include "model/placements/recipes.hpp"

namespace gradflow {
namespace {

class ResiDual final : public Placement {
 public:
  std::string name() const override { return "resi-dual"; }
  std::string display_name() const override { return "ResiDual"; }
  std::string equation() const override {
    return "x_a <- LN(x_a + f(x_a)), x_d <- x_d + f(x_a) per sublayer, from x_a = x_d = x; y = x_a + LN(x_d)";
  }
  std::string paper() const override {
    return "Xie et al. 2023, ResiDual: Transformer with Dual Residual Connections";
  }
  std::vector<UnitSpec> block(const ModelConfig& cfg, Index) const override {
    auto units = recipes::post_block(cfg);  // the x_a stream is Post-LN's
    for (UnitSpec& u : units) u.dual_stream = true;
    return units;
  }
  bool final_norm_default(const ModelConfig&) const override { return true; }  // LN(x_d), part of the output
};

}  // namespace

std::unique_ptr<Placement> make_resi_dual_placement() { return std::make_unique<ResiDual>(); }

}  // namespace gradflow
