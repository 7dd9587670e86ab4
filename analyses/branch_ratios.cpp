// branch_ratios.cpp — how much each residual unit changes the stream: ‖c·b‖_F / ‖s ⊙ x‖_F for every unit of block l,
// with x the unit's input (the residual stream it adds to), s ⊙ x its skip term and c·b the branch term
// (residual_unit.hpp: z = s ⊙ x + c·b [+ x_block]); keyed "attention" / "feed_forward" (docs/math.md §10).
// The unit inputs come from Model::unit_inputs (rebuilt from the forward cache without running a branch again).
#include <cmath>
#include <string>

#include "gradflow/core/error.hpp"
#include "gradflow/linalg/svd.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/report/finite_json.hpp"
#include "gradflow/report/number_text.hpp"
#include "gradflow/run/analysis.hpp"

namespace gradflow {

namespace {

class BranchRatios final : public Analysis {
 public:
  std::string name() const override { return "branch-ratios"; }
  std::string description() const override {
    return "||branch term|| / ||skip term|| of every residual unit (how much each sublayer changes the stream)";
  }
  void run(const AnalysisContext& ctx, Json& report) const override {
    const ParamStore& p = ctx.model.params();
    for (Index l = 0; l < ctx.model.layers(); ++l) {
      const std::vector<Mat> in = ctx.model.unit_inputs(ctx.trace, l);
      const auto& units = ctx.model.block(l);
      const auto& caches = ctx.trace.blocks[static_cast<size_t>(l)].units;
      Json ratios = Json::object();
      for (size_t u = 0; u < units.size(); ++u) {
        const double branch = std::abs(units[u].branch_coefficient(p)) * frobenius_norm(caches[u].b);
        const double skip = frobenius_norm(units[u].apply_skip(p, ctx.model.read_stream(in[u])));  // x_a for two streams
        std::string key = units[u].spec.kind == SublayerKind::Attention ? fields::kAttention : fields::kFeedForward;
        if (ratios.contains(key)) key += "_" + std::to_string(u);  // a second unit of the same kind
        // a ratio too large for a double (a branch scaled past it: --residual-scale or --init-scale near 1e308) is an
        // overflow, exit 3 as the NaN/Inf contract says; only a zero skip term leaves it undefined (null)
        if (!std::isfinite(branch) || !std::isfinite(skip) || (skip > 0 && !std::isfinite(branch / skip)))
          throw Error("the branch ratio ||c*b|| / ||skip|| of layer " + std::to_string(l) + "'s " + key +
                          " overflows a double (||c*b|| = " + number_text(branch) + ", ||skip|| = " + number_text(skip) +
                          "); fix: " + std::string(kNonFiniteFix),
                      ErrorKind::Numeric);
        ratios[key] = finite_or_null(branch / skip);
      }
      report[fields::kLayers][static_cast<size_t>(l)][fields::kBranchRatio] = std::move(ratios);
    }
  }
};

}  // namespace

std::unique_ptr<Analysis> make_branch_ratios() { return std::make_unique<BranchRatios>(); }

}  // namespace gradflow
