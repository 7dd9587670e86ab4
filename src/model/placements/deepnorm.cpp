// deepnorm.cpp — DeepNorm (Wang et al. 2022, DeepNet; encoder-only constants): x = LN(α·x + λG(x)) for both
// sublayers, α = (2L)^(1/4); at init the v rows of in_proj, out_proj, linear1 and linear2 are multiplied by
// β = (8L)^(-1/4) (the reference code divides them by (8L)^(1/4)).
#include <cmath>

#include "model/placements/recipes.hpp"

namespace gradflow {
namespace {

class DeepNorm final : public Placement {
 public:
  std::string name() const override { return "deepnorm"; }
  std::string display_name() const override { return "DeepNorm"; }
  std::string equation() const override {
    return "h = LN1(a*x + A(x)); y = LN2(a*h + F(h)); a = (2L)^(1/4), init beta = (8L)^(-1/4)";
  }
  std::string paper() const override { return "Wang et al. 2022, DeepNet"; }
  std::vector<SchemeOption> options() const override {
    SchemeOption a{"deepnorm-alpha", SchemeOption::Type::Number, "deepnorm: skip scale alpha (default (2L)^(1/4))"};
    SchemeOption b{"deepnorm-beta", SchemeOption::Type::Number, "deepnorm: init scale beta (default (8L)^(-1/4))"};
    return {a, b};
  }
  std::vector<UnitSpec> block(const ModelConfig& cfg, Index) const override {
    auto units = recipes::post_block(cfg);
    for (auto& u : units) u.skip_scale = alpha(cfg);
    return units;
  }
  void rescale_initial(const ModelConfig& cfg, ParamRole r, Index /*d*/, Mat& v) const override {
    recipes::scale_v_out_ffn(r, cfg, v, beta(cfg));
  }
  void config_fields(const ModelConfig& cfg, nlohmann::ordered_json& j) const override { constants(cfg, j); }
  void constants(const ModelConfig& cfg, nlohmann::ordered_json& j) const override {
    j["deepnorm_alpha"] = alpha(cfg);
    j["deepnorm_beta"] = beta(cfg);
  }

 private:
  static double alpha(const ModelConfig& cfg) {
    return cfg.scheme.number("deepnorm-alpha", std::pow(2.0 * static_cast<double>(cfg.layers), 0.25));
  }
  static double beta(const ModelConfig& cfg) {
    return cfg.scheme.number("deepnorm-beta", std::pow(8.0 * static_cast<double>(cfg.layers), -0.25));
  }
};

}  // namespace

std::unique_ptr<Placement> make_deepnorm_placement() { return std::make_unique<DeepNorm>(); }

}  // namespace gradflow
