// peri.cpp — Peri-LN (Kim et al. 2025, "Peri-LN: Revisiting Normalization Layer in the Transformer Architecture",
// arXiv 2502.02732, Eq. 3; no reference code was released): y = x + Norm(Module(Norm(x))) per sublayer and a
// final norm. That is exactly sandwich's block, so this entry is an alias of it: the same recipe, the same
// parameter names (norm1..norm4, norm), the same numbers; the report's config says `placement_alias_of:
// sandwich`. The paper's optional normalization of the embedding output has no counterpart here (gradflow's
// stack starts at x_0, the embedding's output).
#include "model/placements/recipes.hpp"

namespace gradflow {
namespace {

class Peri final : public Placement {
 public:
  std::string name() const override { return "peri"; }
  std::string display_name() const override { return "Peri-LN"; }
  std::string equation() const override {
    return "alias of sandwich (same block, same numbers): h = x + LN3(A(LN1(x))); y = h + LN4(F(LN2(h))); final LN";
  }
  std::string paper() const override { return "Kim et al. 2025, Peri-LN (Eq. 3; no reference code)"; }
  std::vector<UnitSpec> block(const ModelConfig& cfg, Index layer) const override {
    return find_placement("sandwich").block(cfg, layer);
  }
  bool final_norm_default(const ModelConfig& cfg) const override {
    return find_placement("sandwich").final_norm_default(cfg);
  }
  void config_fields(const ModelConfig&, nlohmann::ordered_json& j) const override {
    j["placement_alias_of"] = "sandwich";
  }
};

}  // namespace

std::unique_ptr<Placement> make_peri_placement() { return std::make_unique<Peri>(); }

}  // namespace gradflow
