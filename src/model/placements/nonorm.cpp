// nonorm.cpp — no norm at all: h = x + λA(x); y = h + λF(h) (T-Fixup's architecture, Huang et al. 2020: use
// with --init t-fixup).
#include "model/placements/recipes.hpp"

namespace gradflow {
namespace {

class NoNorm final : public Placement {
 public:
  std::string name() const override { return "nonorm"; }
  std::string display_name() const override { return "no norm"; }
  std::string equation() const override {
    return "h = x + A(x); y = h + F(h); no norm (T-Fixup's architecture: use with --init t-fixup)";
  }
  std::string paper() const override {
    return "Huang et al. 2020, Improving Transformer Optimization Through Better Initialization (T-Fixup)";
  }
  std::vector<UnitSpec> block(const ModelConfig& cfg, Index) const override {
    return {recipes::unit(recipes::kA, cfg), recipes::unit(recipes::kF, cfg)};
  }
};

}  // namespace

std::unique_ptr<Placement> make_nonorm_placement() { return std::make_unique<NoNorm>(); }

}  // namespace gradflow
