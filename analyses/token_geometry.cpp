// token_geometry.cpp — how alike the tokens are at each depth (rank collapse; Dong et al. 2021, Noci et al. 2022):
// for every block input x_l (the residual stream between blocks, trace.x[l], before any norm of block l) and for
// the network output y (for a two-stream scheme, ResiDual, of the stream x_a the sublayers read): the mean pairwise cosine of the tokens, the relative distance to rank one
// ‖X − 1·x̄ᵀ‖_F/‖X‖_F and the stable rank ‖X‖_F²/‖X‖_2² (linalg/token_geometry.hpp, docs/math.md §10).
// Cost per layer: one (n, n) Gram matrix and the singular values of an (n, d) matrix, O(n²d + n·d·min(n, d)).
#include "gradflow/linalg/token_geometry.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/report/finite_json.hpp"
#include "gradflow/run/analysis.hpp"

#include <vector>

namespace gradflow {
namespace {

Json geometry_json(const TokenGeometry& g) {
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
    // The layers are independent: one per thread (each one's BLAS and LAPACK calls then run on that thread alone,
    // with the same results as on two: tests/analyses check the reports bit for bit).
    const Index L = ctx.model.layers();
    std::vector<TokenGeometry> g(static_cast<size_t>(L) + 1);
#pragma omp parallel for schedule(dynamic, 1)
    for (Index l = 0; l <= L; ++l)
      g[static_cast<size_t>(l)] = token_geometry(l < L ? ctx.model.read_stream(ctx.trace.x[static_cast<size_t>(l)])  // x_a for two streams
                                                       : ctx.trace.y);
    for (Index l = 0; l < L; ++l)
      report[fields::kLayers][static_cast<size_t>(l)][fields::kTokenGeometry] = geometry_json(g[static_cast<size_t>(l)]);
    report[fields::kOutputTokenGeometry] = geometry_json(g[static_cast<size_t>(L)]);
  }
};

}  // namespace

std::unique_ptr<Analysis> make_token_geometry() { return std::make_unique<TokenGeometryAnalysis>(); }

}  // namespace gradflow
