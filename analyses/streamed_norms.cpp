// streamed_norms.cpp — the Frobenius norms of jacobian_norms.cpp, EXACT, without forming a matrix (--mode streamed):
// ‖P_l‖_F and ‖B_l‖_F for every l from chunks of --stream-rows identity rows pushed down the VJP chain
// (matrix_free/streamed.hpp), in the fields explicit mode uses, each with method "exact (streamed)"; plus the exact
// mean of σ² (‖·‖_F²/N, the dynamical isometry statistic). Spectral norms, σ_min and the rank need singular values:
// null here (explicit or matrix-free mode). With --device cuda the chain runs on the GPU's kernels
// (matrix_free/device_chain.hpp; the forward pass stays on the CPU).
#include <algorithm>
#include <cmath>

#include "jacobian_chains.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/report/progress.hpp"
#include "gradflow/run/analysis.hpp"

namespace gradflow {
namespace {

constexpr const char* kStreamedMethod = "exact (streamed)";

// JSON cannot hold ±Inf/NaN: those become null (the log10_ fields stay finite).
Json number_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json norms_json(const ExactNorm& e) {
  return Json{{fields::kFrobeniusNorm, number_or_null(e.value)},
              {"log10_frobenius_norm", number_or_null(e.log10_value)},
              {"rms_gain", number_or_null(e.rms_gain)},
              {"mean_squared_singular_value", number_or_null(e.mean_sq_singular)},
              {"method", kStreamedMethod}};
}

class StreamedNorms final : public Analysis {
 public:
  std::string name() const override { return "streamed-norms"; }
  std::string description() const override {
    return "exact Frobenius norms of B_l and P_l and the mean of sigma^2, from identity rows streamed through VJPs";
  }
  bool enabled(const AnalysisContext& ctx) const override { return ctx.opts.engine == Engine::Streamed; }
  void check(const Model& model, const AnalysisOptions& opts, const Backend& backend) const override {
    if (opts.engine == Engine::Streamed) JacobianChains::check_covered(model, opts, backend, Engine::Streamed);
  }
  void run(const AnalysisContext& ctx, Json& report) const override {
    // N: the state's size n·width (the columns of B_l and P_l); P_l's singular values: min(N, n·d)
    const Index L = ctx.model.layers(), N = ctx.tokens() * ctx.width();
    const Index P_size = ctx.product_size();
    const bool blocks = ctx.opts.stream_blocks;  // --stream-blocks off: ‖P_l‖_F only, half the work
    // progress in units of one cotangent through one block (each row goes through block l twice: P_l and B_l)
    const Index per_row = blocks ? 2 : 1;
    Progress progress("streamed exact Jacobian norms", per_row * N * L, ctx.opts.progress);
    const auto step = [&](Index, Index k) { progress.step(per_row * k); };
    // the model's own VJPs, or the chain on a device's kernels (the trace uploaded once, the stacks stay there)
    const StreamedSweep s =
        JacobianChains(ctx, std::min(ctx.opts.stream_rows, N)).streamed(ctx.opts.stream_rows, blocks, step);
    double log_gain_product = 0;
    for (Index l = 0; l < L; ++l) {
      Json& layer = report[fields::kLayers][static_cast<size_t>(l)];
      if (blocks) {
        const ExactNorm& b = s.block[static_cast<size_t>(l)];
        layer[fields::kBlockJacobian] = norms_json(b);
        log_gain_product += (b.log10_value - 0.5 * std::log10(static_cast<double>(N))) * std::log(10.0);
      } else {
        layer[fields::kBlockJacobian] = Json{{fields::kFrobeniusNorm, nullptr}, {"method", "not computed (--stream-blocks off)"}};
      }
      Json p = norms_json(s.product[static_cast<size_t>(l)]);
      p["size"] = P_size;
      layer[fields::kProductJacobian] = std::move(p);
    }
    Json& sum = report[fields::kSummary];
    // the per-layer estimate (product of the blocks' RMS gains) beside the true product's RMS gain
    sum[fields::kPerLayerRmsGainProduct] = blocks ? number_or_null(std::exp(log_gain_product)) : Json(nullptr);
    sum[fields::kBottomProductRmsGain] = report[fields::kLayers][0][fields::kProductJacobian]["rms_gain"];
    sum["rms_gain_method"] = kStreamedMethod;
    sum["stream_rows"] = s.rows_per_chunk;
    sum["stream_chunks"] = s.chunks;
  }
};

}  // namespace

std::unique_ptr<Analysis> make_streamed_norms() { return std::make_unique<StreamedNorms>(); }

}  // namespace gradflow
