// gradient_norms.cpp — how large the gradient is at each depth: ‖dL/dx_l‖ for every block input, the
// gradient norm of every parameter of every block, and the summary of the depth profile:
//   bottom_to_top_grad_ratio   = ‖dL/dx_0‖ / ‖dL/dx_{L−1}‖
//   grad_growth_rate_per_layer = b of the least-squares fit ln‖dL/dx_l‖ ≈ a + b·l  (nats per layer;
//                                negative: the gradient shrinks towards the top; exp(b) is the factor per layer)
#include <cmath>

#include "gradflow/linalg/svd.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/report/gradient_profile.hpp"
#include "gradflow/run/analysis.hpp"

namespace gradflow {
namespace {

// Least-squares slope of y against 0, 1, ..., m−1 (0 for m < 2).
double slope(const std::vector<double>& y) {
  const double m = static_cast<double>(y.size());
  if (y.size() < 2) return 0.0;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const double x = static_cast<double>(i);
    sx += x; sy += y[i]; sxx += x * x; sxy += x * y[i];
  }
  return (m * sxy - sx * sy) / (m * sxx - sx * sx);
}

class GradientNorms final : public Analysis {
 public:
  std::string name() const override { return "gradient-norms"; }
  std::string description() const override {
    return "||dL/dx_l|| per block, every parameter-gradient norm, and the depth profile's summary";
  }
  void run(const AnalysisContext& ctx, Json& report) const override {
    const Index L = ctx.model.layers();
    std::vector<double> grad_norms, log_g;
    for (Index l = 0; l < L; ++l) {
      grad_norms.push_back(frobenius_norm(ctx.dx[static_cast<size_t>(l)]));
      log_g.push_back(std::log(grad_norms.back()));
    }
    std::vector<ParamGradNorm> params;
    const auto& all = ctx.model.params().all();
    for (size_t i = 0; i < all.size(); ++i)
      params.push_back({&all[i].name, ctx.model.block_of_param(static_cast<int>(i)), ctx.param_grad_norms[i]});
    report["head_param_grad_norms"] = write_gradient_profile(grad_norms, params, report[fields::kLayers]);
    if (ctx.model.two_streams()) {  // each stream's part of ‖dL/dx_l‖ (the pair's), and the input's gradient
      const Index d = ctx.model.d_model();
      for (Index l = 0; l < L; ++l) {
        const Mat& g = ctx.dx[static_cast<size_t>(l)];
        Json& layer = report[fields::kLayers][static_cast<size_t>(l)];
        layer[fields::kGradNormStreamA] = frobenius_norm(g.leftCols(d));
        layer[fields::kGradNormStreamD] = frobenius_norm(g.rightCols(d));
      }
      const Mat& g0 = ctx.dx[0];
      report[fields::kSummary][fields::kInputGradNorm] = frobenius_norm(Mat(g0.leftCols(d) + g0.rightCols(d)));
    }
    report[fields::kOutputGradNorm] = frobenius_norm(ctx.dL_dy);
    report[fields::kLoss] = ctx.loss;
    Json& s = report[fields::kSummary];
    s[fields::kBottomToTopGradRatio] = bottom_to_top_ratio(grad_norms);
    const double b = slope(log_g);
    s[fields::kGradGrowthRatePerLayer] = b;
    s[fields::kGradGrowthFactorPerLayer] = std::exp(b);
  }
};

}  // namespace

std::unique_ptr<Analysis> make_gradient_norms() { return std::make_unique<GradientNorms>(); }

}  // namespace gradflow
