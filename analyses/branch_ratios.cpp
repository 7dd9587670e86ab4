// branch_ratios.cpp — how much each residual unit changes the stream: ‖c·b‖_F / ‖s ⊙ x‖_F for every unit of block l,
// with x the unit's input (the residual stream it adds to), s ⊙ x its skip term and c·b the branch term
// (residual_unit.hpp: z = s ⊙ x + c·b [+ x_block]); keyed "attention" / "feed_forward" (docs/math.md §13).
// The unit inputs are rebuilt from the forward cache without running a branch again: x of unit 0 is x_l, and
// x of unit u + 1 is PostNorm(z_u) (a token-wise norm, O(n·d)) or z_u; the same operations as the forward pass,
// so the last unit's output is trace.x[l + 1] bit for bit (tests/run/test_layer_quantities.cpp checks it).
#include "gradflow/linalg/svd.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/report/finite_json.hpp"
#include "gradflow/run/analysis.hpp"

namespace gradflow {

// Also used by the tests: the input of every unit of block l, then the block's output (units + 1 entries).
std::vector<Mat> unit_inputs(const Model& model, const Trace& trace, Index l) {
  const ParamStore& p = model.params();
  const Mat& x_block = trace.x[static_cast<size_t>(l)];
  const auto& units = model.block(l);
  const auto& caches = trace.blocks[static_cast<size_t>(l)].units;
  std::vector<Mat> in{x_block};
  for (size_t u = 0; u < units.size(); ++u) {
    const ResidualUnit& unit = units[u];
    Mat z = unit.apply_skip(p, in.back());
    z += unit.branch_coefficient(p) * caches[u].b;
    if (unit.spec.add_block_input) z += x_block;
    if (unit.post) {
      NormCache scratch;
      z = unit.post->forward(p, z, scratch);
    }
    in.push_back(std::move(z));
  }
  return in;
}

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
      const std::vector<Mat> in = unit_inputs(ctx.model, ctx.trace, l);
      const auto& units = ctx.model.block(l);
      const auto& caches = ctx.trace.blocks[static_cast<size_t>(l)].units;
      Json ratios = Json::object();
      for (size_t u = 0; u < units.size(); ++u) {
        const double branch = std::abs(units[u].branch_coefficient(p)) * frobenius_norm(caches[u].b);
        const double skip = frobenius_norm(units[u].apply_skip(p, in[u]));
        std::string key = units[u].spec.kind == SublayerKind::Attention ? fields::kAttention : fields::kFeedForward;
        if (ratios.contains(key)) key += "_" + std::to_string(u);  // a second unit of the same kind
        ratios[key] = finite_or_null(branch / skip);
      }
      report[fields::kLayers][static_cast<size_t>(l)][fields::kBranchRatio] = std::move(ratios);
    }
  }
};

}  // namespace

std::unique_ptr<Analysis> make_branch_ratios() { return std::make_unique<BranchRatios>(); }

}  // namespace gradflow
