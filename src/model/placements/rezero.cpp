// rezero.cpp — ReZero (Bachlechner et al. 2020): x = x + λ·a_l·G(x), one learnable gate a_l per layer shared by
// both sublayers (parameter "resweight", initialized to --rezero-alpha, default 0), no norm.
#include "gradflow/model/model.hpp"
#include "model/placements/recipes.hpp"

namespace gradflow {
namespace {

class ReZero final : public Placement {
 public:
  std::string name() const override { return "rezero"; }
  std::string display_name() const override { return "ReZero"; }
  std::string equation() const override {
    return "h = x + a_l*A(x); y = h + a_l*F(h); no norm, a_l learnable, init --rezero-alpha (0)";
  }
  std::string paper() const override { return "Bachlechner et al. 2020, ReZero is All You Need"; }
  std::vector<SchemeOption> options() const override {
    SchemeOption a{"rezero-alpha", SchemeOption::Type::Number, "rezero: initial residual gate alpha"};
    a.show_default = true;
    return {a};
  }
  std::vector<UnitSpec> block(const ModelConfig& cfg, Index) const override {
    UnitSpec a = recipes::unit(recipes::kA, cfg), f = recipes::unit(recipes::kF, cfg);
    a.gate = f.gate = true;
    return {a, f};
  }
  double initial_value(const ModelConfig& cfg, ParamRole r) const override {
    return r == ParamRole::Gate ? alpha(cfg) : 1.0;
  }
  void config_fields(const ModelConfig& cfg, nlohmann::ordered_json& j) const override { j["rezero_alpha"] = alpha(cfg); }
  void layer_constants(const Model& m, Index l, nlohmann::ordered_json& layer) const override {
    layer["rezero_alpha"] = m.params().at(Model::layer_prefix(l) + "resweight")(0, 0);
  }

 private:
  static double alpha(const ModelConfig& cfg) { return cfg.scheme.number("rezero-alpha", 0.0); }
};

}  // namespace

std::unique_ptr<Placement> make_rezero_placement() { return std::make_unique<ReZero>(); }

}  // namespace gradflow
