// matrix_free_norms.cpp — the Jacobian norms of jacobian_norms.cpp without forming a matrix (--mode matrix-free):
// top-k singular values of B_l and P_l and ‖B_l − I‖₂ by Lanczos through JVP/VJP (matrix_free/chain_singular.hpp), and
// Frobenius norms ‖P_l‖_F, ‖B_l‖_F by Hutchinson probes in one batched backward sweep (matrix_free/hutchinson.hpp).
// σ_min and the numerical rank need the whole spectrum: null here (docs/scaling.md says why). With --device cuda both
// run on the GPU's kernels: the Hutchinson sweep's probe stacks and the Lanczos operators (DeviceChainOperator).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "jacobian_chains.hpp"
#include "gradflow/run/analysis.hpp"
#include "gradflow/matrix_free/chain_singular.hpp"
#include "gradflow/run/engine.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/report/progress.hpp"

namespace gradflow {
namespace {

// JSON cannot hold ±Inf/NaN: those become null (the log10_ fields stay finite).
Json number_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

// Lanczos expected applications of JᵀJ per operator (for the progress estimate only).
constexpr Index kExpectedLanczosOps = 40;

void put_lanczos(Json& o, const ChainSingular& s, const ChainOperator& J, Index k) {
  Json tv = Json::array(), tl = Json::array();
  for (Index i = 0; i < s.values.size(); ++i) {
    tv.push_back(number_or_null(s.values(i)));
    tl.push_back(s.log10_values(i));
  }
  o["spectral_norm"] = s.values.size() ? number_or_null(s.values(0)) : Json(nullptr);
  o["log10_spectral_norm"] = s.values.size() ? Json(s.log10_values(0)) : Json(nullptr);
  o["top_singular_values"] = std::move(tv);
  o["lanczos"] = Json{{"k", k},
                      {"converged", s.solver.converged},
                      {"iterations", s.solver.iterations},
                      {"operations", s.solver.operations},
                      {"products_per_operation", 2 * J.length()},
                      {"tol", kChainLanczosTol},
                      {"scale_exp2", s.scale_exp2}};
  if (!s.solver.converged)
    std::fprintf(stderr, "gradflow: warning: Lanczos for %s did not converge in %lld restarts; spectral_norm is null\n",
                 J.what().c_str(), static_cast<long long>(s.solver.iterations));
}

void put_hutchinson(Json& o, const FrobeniusEstimate& f, double sqrtN) {
  o[fields::kFrobeniusNorm] = number_or_null(f.value);
  o["frobenius_std_error"] = number_or_null(f.std_error);
  o["log10_frobenius_norm"] = f.log10_value;
  o["hutchinson_probes"] = f.probes;
  o["rms_gain"] = number_or_null(f.value / sqrtN);
  o["rms_gain_std_error"] = number_or_null(f.std_error / sqrtN);
}

void put_methods(Json& o, bool spectral, bool frobenius, bool product) {
  Json m = Json::object();
  if (spectral) m["spectral_norm"] = "lanczos";
  if (spectral && !product) m["minus_identity_spectral_norm"] = "lanczos";
  if (frobenius) m[fields::kFrobeniusNorm] = "hutchinson";
  if (product) {
    m["min_singular_value"] = "unavailable: needs the full spectrum (--mode explicit)";
    m["numerical_rank"] = "unavailable: needs the full spectrum (--mode explicit)";
    o["min_singular_value"] = nullptr;
    o["numerical_rank"] = nullptr;
  }
  o["method"] = spectral && frobenius ? "lanczos+hutchinson" : spectral ? "lanczos" : frobenius ? "hutchinson" : "none";
  o["methods"] = std::move(m);
}

class MatrixFreeNorms final : public Analysis {
 public:
  std::string name() const override { return "matrix-free-norms"; }
  std::string description() const override {
    return "top-k singular values of B_l and P_l by Lanczos on JVP/VJP, Frobenius norms by Hutchinson probes";
  }
  bool enabled(const AnalysisContext& ctx) const override { return ctx.opts.engine == Engine::MatrixFree; }
  void check(const Model& model, const AnalysisOptions& opts, const Backend& backend) const override {
    if (opts.engine == Engine::MatrixFree) JacobianChains::check_covered(model, opts, backend, Engine::MatrixFree);
  }
  void run(const AnalysisContext& ctx, Json& report) const override {
    const AnalysisOptions& o = ctx.opts;
    // N: the state's size n·width (the columns of B_l and P_l; RMS gains per input direction); P_l has
    // min(N, n·d) singular values (ResiDual: P_l is N/2 × N)
    const Index L = ctx.model.layers(), N = ctx.tokens() * ctx.width();
    const Index P_size = ctx.product_size();
    const double sqrtN = std::sqrt(static_cast<double>(N));
    const std::vector<Index> spectral = parse_spectral_layers(o.spectral_layers, L);
    const Index K = o.hutchinson_probes, k = std::min<Index>(o.top_k, P_size);
    // progress in units of one tangent through one block
    Index total = K > 0 ? 2 * K * L : 0;
    if (!spectral.empty()) total += 4 * kExpectedLanczosOps * L;  // ‖B_l‖₂ and ‖B_l − I‖₂
    for (Index l : spectral) total += 2 * kExpectedLanczosOps * (L - l);
    Progress progress("matrix-free Jacobians", total, o.progress);

    // The model's own JVPs/VJPs, or with a device backend the same chain on its kernels
    // (jacobian_chains.hpp): Hutchinson's K probes as one stack, Lanczos's one vector at a time
    JacobianChains chains(ctx, std::max<Index>(K, 1));
    HutchinsonSweep h;
    const auto probes_done = [&](Index) { progress.step(2 * K); };
    if (K > 0) h = chains.hutchinson(K, o.probe_seed, true, probes_done);
    const auto chain = [&](Index from, Index to, std::string what) { return chains.chain(from, to, std::move(what)); };

    // B_l: every layer whenever any spectral layer is asked (all L together cost about one P_0)
    std::vector<Json> blocks(static_cast<size_t>(L), Json::object()), products(static_cast<size_t>(L), Json::object());
    if (!spectral.empty())
      for (Index l = L - 1; l >= 0; --l) {
        const std::unique_ptr<ChainOperator> Bp = chain(l, l + 1, block_jacobian_name(l));
        const ChainOperator& B = *Bp;
        Json& b = blocks[static_cast<size_t>(l)];
        put_lanczos(b, chain_top_singular(B, k, o.probe_seed), B, k);
        if (!B.square()) {  // ResiDual's B_{L−1} ends in the head: state (2N) → output (N); no B − I
          b["minus_identity_spectral_norm"] = nullptr;
          progress.step(4 * kExpectedLanczosOps);
          continue;
        }
        const ChainSingular shifted = chain_top_singular_minus_identity(B, 1, o.probe_seed);
        b["minus_identity_spectral_norm"] = shifted.values.size() ? number_or_null(shifted.values(0)) : Json(nullptr);
        b["minus_identity_lanczos"] = Json{{"converged", shifted.solver.converged},
                                           {"iterations", shifted.solver.iterations},
                                           {"operations", shifted.solver.operations}};
        progress.step(4 * kExpectedLanczosOps);
      }
    for (Index l : spectral) {
      const std::unique_ptr<ChainOperator> P = chain(l, L, product_jacobian_name(l));
      put_lanczos(products[static_cast<size_t>(l)], chain_top_singular(*P, k, o.probe_seed), *P, k);
      progress.step(2 * kExpectedLanczosOps * (L - l));
    }
    double log_gain_product = 0;
    for (Index l = 0; l < L; ++l) {
      Json& b = blocks[static_cast<size_t>(l)];
      Json& p = products[static_cast<size_t>(l)];
      const bool sp = !spectral.empty(), pp = std::binary_search(spectral.begin(), spectral.end(), l);
      if (K > 0) {
        put_hutchinson(b, h.block[static_cast<size_t>(l)], sqrtN);
        put_hutchinson(p, h.product[static_cast<size_t>(l)], sqrtN);
        log_gain_product += (h.block[static_cast<size_t>(l)].log10_value - std::log10(sqrtN)) * std::log(10.0);
      }
      p["size"] = P_size;
      put_methods(b, sp, K > 0, false);
      if (sp && b["minus_identity_spectral_norm"].is_null())
        b["methods"]["minus_identity_spectral_norm"] = "undefined: B_" + std::to_string(l) + " is not square";
      put_methods(p, pp, K > 0, true);
      Json& layer = report["layers"][static_cast<size_t>(l)];
      layer["block_jacobian"] = std::move(b);
      layer["product_jacobian"] = std::move(p);
    }
    Json& sum = report["summary"];
    if (K > 0) {
      // the per-layer estimate (product of the blocks' RMS gains) beside the true product's RMS gain
      sum["per_layer_rms_gain_product"] = number_or_null(std::exp(log_gain_product));
      sum["bottom_product_rms_gain"] = report["layers"][0]["product_jacobian"]["rms_gain"];
      sum["rms_gain_method"] = "hutchinson";
    }
  }
};

}  // namespace

std::unique_ptr<Analysis> make_matrix_free_norms() { return std::make_unique<MatrixFreeNorms>(); }

}  // namespace gradflow
