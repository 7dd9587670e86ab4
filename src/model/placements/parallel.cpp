// parallel.cpp — the parallel residual (GPT-J, Wang & Komatsuzaki 2021; GPT-NeoX/Pythia, Black et al. 2022; PaLM,
// Chowdhery et al. 2022): y = x + λA(LN1(x)) + λF(LN2(x)), both branches reading the block's input; a final LN.
// --shared-norm: one norm feeding both branches, y = x + λA(LN1(x)) + λF(LN1(x)) (GPT-J, PaLM).
#include "model/placements/recipes.hpp"

namespace gradflow {
namespace {

class Parallel final : public Placement {
 public:
  std::string name() const override { return "parallel"; }
  std::string display_name() const override { return "Parallel"; }
  std::string equation() const override {
    return "y = x + A(LN1(x)) + F(LN2(x)) (--shared-norm: LN1 for both); final LN";
  }
  std::string paper() const override { return "GPT-J (Wang & Komatsuzaki 2021); GPT-NeoX (Black et al. 2022)"; }
  std::vector<UnitSpec> block(const ModelConfig& cfg, Index) const override {
    std::vector<UnitSpec> units = recipes::pre_block(cfg);  // a = x + λA(LN1(x)), then the feed-forward unit
    units[1].parallel = true;                                // ... whose branch reads x: y = a + λF(LN2(x))
    if (cfg.shared_norm) units[1].pre_norm = units[0].pre_norm;
    return units;
  }
  bool final_norm_default(const ModelConfig&) const override { return true; }
};

}  // namespace

std::unique_ptr<Placement> make_parallel_placement() { return std::make_unique<Parallel>(); }

}  // namespace gradflow
