// output_sensitivity.cpp — how much the output moves when every parameter is perturbed a little (Liu et al. 2020,
// Admin: Post-LN's output change grows like O(L), Pre-LN's like O(log L)). For K probes k, δ_k has entries
// δ_i = r·|θ_i|·ξ_i with ξ_i ~ N(0, 1) (seeded stream "sensitivity/k/<parameter>"), and the report gives the mean
// over probes, with its standard error (sample std / √K), of
//   first_order        ‖J_θ δ_k‖_F²                 exact, from the parameter JVP (Model::jvp_with_params)
//   finite_difference  ‖y(θ + δ_k) − y(θ)‖_F²      a second forward pass on the perturbed weights
// (equal to first order in r: their ratio is 1 + O(r)). Off unless --sensitivity-probes K > 0: each probe costs
// about two forward passes and a copy of the parameters (docs/math.md §11).
#include <cmath>

#include "gradflow/model/init.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/report/finite_json.hpp"
#include "gradflow/run/analysis.hpp"

namespace gradflow {
namespace {

// The mean of v and its standard error (sample standard deviation / √K; 0 for K = 1).
std::pair<double, double> mean_and_stderr(const std::vector<double>& v) {
  const double K = static_cast<double>(v.size());
  double sum = 0, ss = 0;
  for (double x : v) sum += x;
  const double mean = sum / K;
  for (double x : v) ss += (x - mean) * (x - mean);
  return {mean, v.size() > 1 ? std::sqrt(ss / (K - 1) / K) : 0.0};
}

class OutputSensitivity final : public Analysis {
 public:
  std::string name() const override { return "output-sensitivity"; }
  std::string description() const override {
    return "||J_theta delta||^2 and ||y(theta + delta) - y(theta)||^2 for random relative perturbations delta";
  }
  bool enabled(const AnalysisContext& ctx) const override { return ctx.opts.sensitivity_probes > 0; }
  void run(const AnalysisContext& ctx, Json& report) const override {
    const Model& model = ctx.model;
    const auto& all = model.params().all();
    const Mat none = Mat::Zero(ctx.trace.y.rows(), ctx.trace.y.cols());
    std::vector<double> first, fd;
    for (Index k = 0; k < ctx.opts.sensitivity_probes; ++k) {
      ParamGrads delta(model.params());
      Model perturbed = model;
      for (size_t i = 0; i < all.size(); ++i) {
        const int idx = static_cast<int>(i);
        const Mat& theta = all[i].value;
        const Mat xi = random_normal(ctx.opts.probe_seed, "sensitivity/" + std::to_string(k) + "/" + all[i].name,
                                     theta.rows(), theta.cols());
        delta[idx] = ctx.opts.sensitivity_size * theta.cwiseAbs().cwiseProduct(xi);
        perturbed.params()[idx] += delta[idx];
      }
      first.push_back(model.jvp_with_params(ctx.trace, none, delta).squaredNorm());
      fd.push_back((perturbed.forward(model.read_stream(ctx.trace.x[0])).y - ctx.trace.y).squaredNorm());  // x_0
    }
    const auto [a, a_se] = mean_and_stderr(first);
    const auto [b, b_se] = mean_and_stderr(fd);
    report[fields::kOutputSensitivity] = Json{{fields::kFirstOrder, finite_or_null(a)},
                                              {fields::kFirstOrderStderr, finite_or_null(a_se)},
                                              {fields::kFiniteDifference, finite_or_null(b)},
                                              {fields::kFiniteDifferenceStderr, finite_or_null(b_se)}};
  }
};

}  // namespace

std::unique_ptr<Analysis> make_output_sensitivity() { return std::make_unique<OutputSensitivity>(); }

}  // namespace gradflow
