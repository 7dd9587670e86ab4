// b2t.cpp — B2T connection (Takase et al. 2023; takase/b2t_connection): h = LN1(x + λA(x));
// y = LN2(h + λF(h) + x); at init every weight matrix of a block × L^(-1/2) (the reference's rescaling_init).
#include <cmath>

#include "model/placements/recipes.hpp"

namespace gradflow {
namespace {

class B2T final : public Placement {
 public:
  std::string name() const override { return "b2t"; }
  std::string display_name() const override { return "B2T"; }
  std::string equation() const override {
    return "h = LN1(x + A(x)); y = LN2(h + F(h) + x); init: weight matrices x L^(-1/2)";
  }
  std::string paper() const override {
    return "Takase et al. 2023, B2T Connection: Serving Stability and Performance in Deep Transformers";
  }
  std::vector<UnitSpec> block(const ModelConfig& cfg, Index) const override {
    auto units = recipes::post_block(cfg);
    units[1].add_block_input = true;
    return units;
  }
  void rescale_initial(const ModelConfig& cfg, ParamRole r, Index, Mat& v) const override {
    if (recipes::is_weight_matrix(r)) v *= scale(cfg);
  }
  void constants(const ModelConfig& cfg, nlohmann::ordered_json& j) const override { j["b2t_init_scale"] = scale(cfg); }

 private:
  static double scale(const ModelConfig& cfg) { return 1.0 / std::sqrt(static_cast<double>(cfg.layers)); }
};

}  // namespace

std::unique_ptr<Placement> make_b2t_placement() { return std::make_unique<B2T>(); }

}  // namespace gradflow
