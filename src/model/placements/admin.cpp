// admin.cpp — Admin (Liu et al. 2020, "Understanding the Difficulty of Training Transformers"):
// x = LN(ω ⊙ x + λG(x)), ω a learnable (d) vector per sublayer ("attn_omega", "ffn_omega", names as admin-torch's
// as_parameter example), profiled by one forward pass (reference: LiyuanLucasLiu/Transformer-Clinic,
// init_type adaptive-profiling):
//   ω_1 = 1;  ω_{i+1} = sqrt(Var[ω_i ⊙ x_{i-1}] + Var[f_i(x_{i-1})])  over sublayers i in order, every entry of
// sublayer i's ω set to ω_i before it runs; Var the population variance over all n·d entries (np.var).
#include <cmath>

#include "gradflow/model/model.hpp"
#include "model/placements/recipes.hpp"

namespace gradflow {
namespace {

// Population variance of every entry of m (numpy's np.var).
double variance(const Mat& m) {
  const double mean = m.mean();
  return (m.array() - mean).square().mean();
}

class Admin final : public Placement {
 public:
  std::string name() const override { return "admin"; }
  std::string display_name() const override { return "Admin"; }
  std::string equation() const override {
    return "h = LN1(w1*x + A(x)); y = LN2(w2*h + F(h)); w per feature, profiled by one forward pass";
  }
  std::string paper() const override {
    return "Liu et al. 2020, Understanding the Difficulty of Training Transformers (Admin)";
  }
  std::vector<UnitSpec> block(const ModelConfig& cfg, Index) const override {
    auto units = recipes::post_block(cfg);
    units[0].skip_param = "attn_omega";
    units[1].skip_param = "ffn_omega";
    return units;
  }
  bool profiles() const override { return true; }
  void profile(Model& model, const Mat& x0) const override {
    ParamStore& p = model.params();
    double ratio = 1.0;  // Transformer-Clinic's encoder_ratio
    Mat x = x0;
    for (Index l = 0; l < model.layers(); ++l) {
      const Mat block_input = x;
      for (const auto& u : model.block(l)) {
        p[u.skip].setConstant(ratio);
        UnitCache c;
        const Mat y = u.forward(p, x, c, &block_input);
        // in Transformer-Clinic: input_std = np.var(residual * ω); output_std = np.var(f(x)); ratio = sqrt(sum)
        const Mat skip_term = x * ratio;
        const Mat branch_term = u.branch_coefficient(p) * c.b;
        ratio = std::sqrt(variance(skip_term) + variance(branch_term));
        x = y;
      }
    }
  }
  void layer_constants(const Model& m, Index l, nlohmann::ordered_json& layer) const override {
    const std::string pre = Model::layer_prefix(l);
    const ParamStore& p = m.params();
    layer["admin_omega"] = {{"attn", p.at(pre + "attn_omega")(0, 0)}, {"ffn", p.at(pre + "ffn_omega")(0, 0)}};
  }
};

}  // namespace

std::unique_ptr<Placement> make_admin_placement() { return std::make_unique<Admin>(); }

}  // namespace gradflow
