// activation_stats.cpp — the scale of the hidden states: RMS of each block's input x_l and of the output y.
// (Xiong et al. 2020, Lemma 2: Pre-LN's ‖x_l‖ grows with depth, Post-LN's stays put.)
#include <cmath>

#include "gradflow/run/analysis.hpp"

namespace gradflow {
namespace {

double rms(const Mat& x) { return x.norm() / std::sqrt(static_cast<double>(x.size())); }

class ActivationStats final : public Analysis {
 public:
  std::string name() const override { return "activation-stats"; }
  std::string description() const override { return "RMS of every block input x_l and of the output y"; }
  void run(const AnalysisContext& ctx, Json& report) const override {
    for (Index l = 0; l < ctx.model.layers(); ++l)
      report["layers"][static_cast<size_t>(l)]["activation_rms"] = rms(ctx.trace.x[static_cast<size_t>(l)]);
    report["output_rms"] = rms(ctx.trace.y);
  }
};

}  // namespace

std::unique_ptr<Analysis> make_activation_stats() { return std::make_unique<ActivationStats>(); }

}  // namespace gradflow
