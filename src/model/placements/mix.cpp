// mix.cpp — Mix-LN (Li et al. 2024; the article's hybrid, C11): K layers Post-LN (the bottom K for post-first,
// the top K for pre-first), the rest Pre-LN; K = --mix-post-layers (default round(0.25·L), halves away from
// zero); a final LN when the top block is Pre-LN.
#include <cmath>

#include "gradflow/core/error.hpp"
#include "gradflow/model/model.hpp"
#include "model/placements/recipes.hpp"

namespace gradflow {
namespace {

class MixLN final : public Placement {
 public:
  std::string name() const override { return "mix"; }
  std::string display_name() const override { return "Mix-LN"; }
  std::string equation() const override {
    return "bottom K layers Post-LN, the rest Pre-LN (post-first; pre-first: top K); final LN if the top is Pre-LN";
  }
  std::string paper() const override { return "Li et al. 2024, Mix-LN; the article's hybrid (C11)"; }
  std::vector<SchemeOption> options() const override {
    SchemeOption k{"mix-post-layers", SchemeOption::Type::Count, "mix: number K of Post-LN layers (default round(L/4))"};
    k.check = [](const ModelConfig& cfg) {
      const Index v = cfg.scheme.count("mix-post-layers", 0);
      require(v >= 0 && v <= cfg.layers, "--mix-post-layers " + std::to_string(v) + " is outside 0.." +
                                             std::to_string(cfg.layers) + "; fix: choose K between 0 and --layers");
    };
    SchemeOption order{"mix-order", SchemeOption::Type::Word, "mix: post-first (bottom K Post-LN) | pre-first (top K)",
                       {"post-first", "pre-first"}};
    order.show_default = true;
    return {k, order};
  }
  std::vector<UnitSpec> block(const ModelConfig& cfg, Index l) const override {
    return is_post(cfg, l) ? recipes::post_block(cfg) : recipes::pre_block(cfg);
  }
  bool final_norm_default(const ModelConfig& cfg) const override { return !is_post(cfg, cfg.layers - 1); }
  void config_fields(const ModelConfig& cfg, nlohmann::ordered_json& j) const override { constants(cfg, j); }
  void constants(const ModelConfig& cfg, nlohmann::ordered_json& j) const override {
    j["mix_post_layers"] = post_layers(cfg);
    j["mix_order"] = order(cfg);
  }
  void layer_constants(const Model& m, Index l, nlohmann::ordered_json& layer) const override {
    layer["post_ln"] = is_post(m.config(), l);
  }

 private:
  static Index post_layers(const ModelConfig& cfg) {
    return cfg.scheme.count("mix-post-layers", static_cast<Index>(std::lround(0.25 * static_cast<double>(cfg.layers))));
  }
  static std::string order(const ModelConfig& cfg) { return cfg.scheme.word("mix-order", "post-first"); }
  static bool is_post(const ModelConfig& cfg, Index l) {
    const Index K = post_layers(cfg);
    return order(cfg) == "post-first" ? l < K : l >= cfg.layers - K;
  }
};

}  // namespace

std::unique_ptr<Placement> make_mix_placement() { return std::make_unique<MixLN>(); }

}  // namespace gradflow
