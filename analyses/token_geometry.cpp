// token_geometry.cpp — how alike the tokens are at each depth (rank collapse; Dong et al. 2021, Noci et al. 2022):
// for every block input x_l (the residual stream between blocks, trace.x[l], before any norm of block l) and for
// the network output y (for a two-stream scheme, ResiDual, of the stream x_a the sublayers read): the mean pairwise cosine of the tokens, the relative distance to rank one
// ‖X − 1·x̄ᵀ‖_F/‖X‖_F and the stable rank ‖X‖_F²/‖X‖_2² (linalg/token_geometry.hpp, docs/math.md §10).
// Cost per layer: one (n, n) Gram matrix and the singular values of an (n, d) matrix, O(n²d + n·d·min(n, d)).
#include "gradflow/linalg/token_geometry.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/report/finite_json.hpp"
#include "gradflow/run/analysis.hpp"

namespace gradflow {
namespace {

Json geometry_json(const Mat& X) {
  const TokenGeometry g = token_geometry(X);
  return Json{{fields::kMeanCosine, finite_or_null(g.mean_cosine)},
              {fields::kRankOneDistance, finite_or_null(g.rank_one_distance)},
              {fields::kStableRank, finite_or_null(g.stable_rank)}};
}

class TokenGeometryAnalysis final : public Analysis {
 public:
  std::string name() const override { return "token-geometry"; }
  std::string description() const override {
    return "mean token cosine, distance to rank one and stable rank of every block input x_l and of y";
  }
  void run(const AnalysisContext& ctx, Json& report) const override {
    for (Index l = 0; l < ctx.model.layers(); ++l)
      report[fields::kLayers][static_cast<size_t>(l)][fields::kTokenGeometry] =
          geometry_json(ctx.model.read_stream(ctx.trace.x[static_cast<size_t>(l)]));  // x_a for two streams
    report[fields::kOutputTokenGeometry] = geometry_json(ctx.trace.y);
  }
};

}  // namespace

std::unique_ptr<Analysis> make_token_geometry() { return std::make_unique<TokenGeometryAnalysis>(); }

}  // namespace gradflow
