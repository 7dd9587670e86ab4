// jacobian_norms.cpp — the explicit Jacobians across depth, B_l = dx_{l+1}/dx_l and P_l = dy/dx_l = B_{L−1}···B_l:
// spectral norms (Lanczos on the explicit B_l, full SVD of P_l) and Frobenius norms, ‖B_l − I‖₂ and ‖B_l − I‖_F/‖I‖_F, σ_min and numerical rank of P_l (svd.hpp for the threshold),
// and the RMS gains ‖·‖_F/√N that compare "the product of per-layer gains" with the true product.
// On the CPU the walk's products use every thread, and the layers' norms and spectra run concurrently (two layers,
// or as many as the threads and --max-memory allow: explicit_concurrent_layers), one layer per thread with
// single-threaded BLAS/LAPACK (a call inside an active OpenMP region), so every number is the
// same call whatever the thread count; the report is written in layer order.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <vector>

#include "gradflow/linalg/svd.hpp"
#include "gradflow/linalg/top_singular.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/report/progress.hpp"
#include "gradflow/report/spectrum_json.hpp"
#include "gradflow/run/analysis.hpp"
#include "gradflow/run/memory_estimate.hpp"

namespace gradflow {
namespace {

// What a layer reports, computed from its B_l and P_l.
struct LayerNumbers {
  double b_frobenius = 0, b_spectral = 0, b_minus_identity = 0, b_minus_identity_frobenius = 0;
  Vec b_spectrum, p_spectrum;
  double p_frobenius = 0;
};

// One layer's host copies and numbers.
struct PendingLayer {
  Index l = 0;
  Mat B, P;
  LayerNumbers out;
  std::exception_ptr error;
};

// P_l first (its SVD overwrites the copy, which is then freed), then B_l (‖B_l − I‖₂ last, in place).
void compute_host(PendingLayer& w, bool spectrum) {
  LayerNumbers& o = w.out;
  o.p_frobenius = frobenius_norm(w.P);
  o.p_spectrum = singular_values(std::move(w.P));
  w.P = Mat();
  o.b_frobenius = frobenius_norm(w.B);
  o.b_spectral = spectral_norm(w.B);
  if (spectrum) o.b_spectrum = singular_values(w.B);
  if (w.B.rows() == w.B.cols()) {
    w.B.diagonal().array() -= 1.0;
    o.b_minus_identity = spectral_norm(w.B);
    o.b_minus_identity_frobenius = frobenius_norm(w.B);
  } else {  // ResiDual's B_{L−1} ends in the head: state (2N) → output (N); B − I is undefined
    o.b_minus_identity = o.b_minus_identity_frobenius = std::numeric_limits<double>::quiet_NaN();
  }
  w.B = Mat();
}

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
    const auto write = [&](Index l, const LayerNumbers& o) {
      Json& layer = report[fields::kLayers][static_cast<size_t>(l)];
      const double fb = o.b_frobenius;
      layer[fields::kBlockJacobian] = Json{{fields::kSpectralNorm, o.b_spectral},
                                     {fields::kFrobeniusNorm, fb},
                                     {"minus_identity_spectral_norm", std::isfinite(o.b_minus_identity)
                                                                          ? Json(o.b_minus_identity) : Json(nullptr)},
                                     {"minus_identity_relative_frobenius",  // ‖B_l − I‖_F / ‖I‖_F
                                      std::isfinite(o.b_minus_identity_frobenius)
                                          ? Json(o.b_minus_identity_frobenius / std::sqrt(N)) : Json(nullptr)},
                                     {"rms_gain", fb / std::sqrt(N)},
                                     {"method", "explicit-lanczos"}};
      if (ctx.opts.spectrum) layer[fields::kBlockJacobian][fields::kSpectrum] = spectrum_json(o.b_spectrum);
      const SpectrumSummary s = summarize_spectrum(o.p_spectrum, o.p_frobenius);
      layer[fields::kProductJacobian] = Json{{fields::kSpectralNorm, s.spectral_norm},
                                       {fields::kFrobeniusNorm, s.frobenius_norm},
                                       {fields::kMinSingularValue, s.min_singular_value},
                                       {"numerical_rank", s.numerical_rank},
                                       {"size", s.size},
                                       {"rms_gain", s.frobenius_norm / std::sqrt(N)},
                                       {"method", "explicit-svd"}};
      if (ctx.opts.spectrum) layer[fields::kProductJacobian][fields::kSpectrum] = spectrum_json(o.p_spectrum);
      log_gain_product += std::log(fb / std::sqrt(N));
      progress.step();
    };
    const Backend& be = ctx.backend();
    if (be.on_host()) {  // host copies of several layers at once, one per thread
      run_host(ctx, write);
    } else {  // a device backend computes on its own buffers, layer by layer
      ctx.for_each_product([&](Index l, const DenseBuffer& B, const DenseBuffer& P) {
        LayerNumbers o;
        o.b_frobenius = be.frobenius_norm(B);
        o.b_spectral = be.spectral_norm(B);
        if (B.rows() == B.cols()) {
          const IdentityDistance dist = be.minus_identity_norms(B);
          o.b_minus_identity = dist.spectral;
          o.b_minus_identity_frobenius = dist.frobenius;
        } else {
          o.b_minus_identity = o.b_minus_identity_frobenius = std::numeric_limits<double>::quiet_NaN();
        }
        if (ctx.opts.spectrum) o.b_spectrum = be.singular_values(B);
        o.p_spectrum = be.singular_values(P);
        o.p_frobenius = be.frobenius_norm(P);
        write(l, o);
      });
    }
    Json& sum = report[fields::kSummary];
    sum["rank_threshold_rtol"] = kRankRtol;
    // the per-layer estimate (product of the blocks' RMS gains) beside the true product's RMS gain
    sum[fields::kPerLayerRmsGainProduct] = std::exp(log_gain_product);
    sum[fields::kBottomProductRmsGain] = report[fields::kLayers][0][fields::kProductJacobian]["rms_gain"];
  }

 private:
  template <class Write>
  static void run_host(const AnalysisContext& ctx, const Write& write) {
    // layers at once, each holding host copies of its B_l and P_l: two (the explicit estimate's 7 (N, N) matrices),
    // more on more threads when --max-memory holds them (src/run/memory_estimate.cpp)
    const int threads = explicit_concurrent_layers(ctx.model.config(), ctx.tokens(), ctx.opts.max_memory_bytes,
                                                   omp_get_max_threads());
    std::vector<PendingLayer> batch;
    const auto flush = [&] {
      const int count = static_cast<int>(batch.size());
      // num_threads(threads) even for one layer: the region stays active, so BLAS inside runs on one thread
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
      for (int i = 0; i < count; ++i) {
        try {
          compute_host(batch[static_cast<size_t>(i)], ctx.opts.spectrum);
        } catch (...) {
          batch[static_cast<size_t>(i)].error = std::current_exception();
        }
      }
      for (PendingLayer& w : batch) {
        if (w.error) std::rethrow_exception(w.error);
        write(w.l, w.out);
      }
      batch.clear();
    };
    ctx.for_each_product([&](Index l, const DenseBuffer& B, const DenseBuffer& P) {
      PendingLayer w;
      w.l = l;
      w.B = B.to_host();
      w.P = P.to_host();
      batch.push_back(std::move(w));
      if (static_cast<int>(batch.size()) == threads || l == 0) flush();
    });
  }
};

}  // namespace

std::unique_ptr<Analysis> make_jacobian_norms() { return std::make_unique<JacobianNorms>(); }

}  // namespace gradflow
