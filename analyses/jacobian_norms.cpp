// jacobian_norms.cpp — the explicit Jacobians across depth, B_l = dx_{l+1}/dx_l and P_l = dy/dx_l = B_{L−1}···B_l:
// spectral norms (Lanczos on the explicit B_l, full SVD of P_l) and Frobenius norms, ‖B_l − I‖₂, σ_min and numerical rank of P_l (svd.hpp for the threshold),
// and the RMS gains ‖·‖_F/√N that compare "the product of per-layer gains" with the true product.
#include <cmath>

#include "gradflow/linalg/svd.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/report/progress.hpp"
#include "gradflow/report/spectrum_json.hpp"
#include "gradflow/run/analysis.hpp"

namespace gradflow {
namespace {

class JacobianNorms final : public Analysis {
 public:
  std::string name() const override { return "jacobian-norms"; }
  std::string description() const override {
    return "spectral/Frobenius norms of B_l and P_l, ||B_l - I||_2, sigma_min and numerical rank of P_l";
  }
  bool enabled(const AnalysisContext& ctx) const override { return ctx.opts.engine == Engine::Explicit; }
  void run(const AnalysisContext& ctx, Json& report) const override {
    const Index L = ctx.model.layers();
    const double N = static_cast<double>(ctx.tokens() * ctx.width());
    Progress progress("explicit Jacobians", L, ctx.opts.progress);
    double log_gain_product = 0;
    const Backend& be = ctx.backend();
    ctx.for_each_product([&](Index l, const DenseBuffer& B, const DenseBuffer& P) {
      Json& layer = report[fields::kLayers][static_cast<size_t>(l)];
      const double fb = be.frobenius_norm(B);
      layer[fields::kBlockJacobian] = Json{{fields::kSpectralNorm, be.spectral_norm(B)},
                                     {"frobenius_norm", fb},
                                     {"minus_identity_spectral_norm", be.spectral_norm_minus_identity(B)},
                                     {"rms_gain", fb / std::sqrt(N)},
                                     {"method", "explicit-lanczos"}};
      if (ctx.opts.spectrum) layer[fields::kBlockJacobian][fields::kSpectrum] = spectrum_json(be.singular_values(B));
      const Vec sp = be.singular_values(P);
      const SpectrumSummary s = summarize_spectrum(sp, be.frobenius_norm(P));
      layer[fields::kProductJacobian] = Json{{fields::kSpectralNorm, s.spectral_norm},
                                       {"frobenius_norm", s.frobenius_norm},
                                       {fields::kMinSingularValue, s.min_singular_value},
                                       {"numerical_rank", s.numerical_rank},
                                       {"size", s.size},
                                       {"rms_gain", s.frobenius_norm / std::sqrt(N)},
                                       {"method", "explicit-svd"}};
      if (ctx.opts.spectrum) layer[fields::kProductJacobian][fields::kSpectrum] = spectrum_json(sp);
      log_gain_product += std::log(fb / std::sqrt(N));
      progress.step();
    });
    Json& sum = report[fields::kSummary];
    sum["rank_threshold_rtol"] = kRankRtol;
    // the per-layer estimate (product of the blocks' RMS gains) beside the true product's RMS gain
    sum[fields::kPerLayerRmsGainProduct] = std::exp(log_gain_product);
    sum[fields::kBottomProductRmsGain] = report[fields::kLayers][0][fields::kProductJacobian]["rms_gain"];
  }
};

}  // namespace

std::unique_ptr<Analysis> make_jacobian_norms() { return std::make_unique<JacobianNorms>(); }

}  // namespace gradflow
