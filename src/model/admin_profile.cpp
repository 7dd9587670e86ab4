// admin_profile.cpp — Admin's ω by one profiling forward pass (Liu et al. 2020, "Understanding the Difficulty
// of Training Transformers"; reference: LiyuanLucasLiu/Transformer-Clinic, init_type adaptive-profiling):
//   ω_1 = 1;  ω_{i+1} = sqrt(Var[ω_i ⊙ x_{i-1}] + Var[f_i(x_{i-1})]),  Var over all entries (see init.hpp).
#include <cmath>

#include "gradflow/model/init.hpp"

namespace gradflow {
namespace {

// Population variance of every entry of m (numpy's np.var).
double variance(const Mat& m) {
  const double mean = m.mean();
  return (m.array() - mean).square().mean();
}

}  // namespace

void profile_initialization(Model& model, const Mat& x0) {
  if (model.config().placement != "admin") return;  // NormFormer's w_resid is a learnable skip too, but stays 1
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

}  // namespace gradflow
