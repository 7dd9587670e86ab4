// reorder.cpp — OLMo 2's reordered norm (OLMo et al. 2024, "2 OLMo 2 Furious"; Hugging Face transformers
// models/olmo2/modular_olmo2.py, Olmo2DecoderLayer): the norm moves from the branch input to the branch output,
// inside the residual: h = x + λ norm1(A(x)); y = h + λ norm2(F(h)); a final norm (Olmo2Model.norm).
// OLMo 2 also normalizes q and k (QK-norm over the full width); this entry is the reordering alone.
#include "model/placements/recipes.hpp"

namespace gradflow {
namespace {

class Reorder final : public Placement {
 public:
  std::string name() const override { return "reorder"; }
  std::string display_name() const override { return "Reorder (OLMo 2)"; }
  std::string equation() const override { return "h = x + LN1(A(x)); y = h + LN2(F(h)); final LN (no input norm)"; }
  std::string paper() const override { return "OLMo et al. 2024, 2 OLMo 2 Furious (OLMo 2's reordered norm)"; }
  std::vector<UnitSpec> block(const ModelConfig& cfg, Index) const override {
    UnitSpec a = recipes::unit(recipes::kA, cfg), f = recipes::unit(recipes::kF, cfg);
    a.branch_norm = "norm1";
    f.branch_norm = "norm2";
    return {a, f};
  }
  bool final_norm_default(const ModelConfig&) const override { return true; }
};

}  // namespace

std::unique_ptr<Placement> make_reorder_placement() { return std::make_unique<Reorder>(); }

}  // namespace gradflow
