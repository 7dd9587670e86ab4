// matrix_free_norms.cpp — the Jacobian norms of jacobian_norms.cpp without forming a matrix (--mode matrix-free):
// top-k singular values of B_l and P_l and ‖B_l − I‖₂ by Lanczos through JVP/VJP (matrix_free/chain_singular.hpp), and
// Frobenius norms ‖P_l‖_F, ‖B_l‖_F by Hutchinson probes, --probe-chunk at a time in batched backward sweeps
// (matrix_free/hutchinson.hpp).
// σ_min and the numerical rank need the whole spectrum: null here (docs/scaling.md says why). With --device cuda both
// run on the GPU's kernels: the Hutchinson sweep's probe stacks and the Lanczos operators (DeviceChainOperator).
// A task of a split run (analyze --plan) computes its chunks of probes alone and reports their sums
// ("hutchinson_partial"), or the Lanczos singular values alone; merge_hutchinson_partials (run/hutchinson_merge.hpp)
// writes the estimates from every task's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "jacobian_chains.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/run/partial_digest.hpp"
#include "gradflow/run/analysis.hpp"
#include "gradflow/run/chunk_coverage.hpp"
#include "gradflow/run/hutchinson_merge.hpp"
#include "gradflow/run/time_estimate.hpp"
#include "gradflow/matrix_free/chain_singular.hpp"
#include "gradflow/run/engine.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/report/progress.hpp"

namespace gradflow {
namespace {

// JSON cannot hold ±Inf/NaN: those become null (the log10_ fields stay finite).
Json number_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

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

constexpr const char* kPartialKey = "hutchinson_partial";

// f == null: the same fields, null (a task's share of a split run, or a merge missing tasks), in the same places.
void put_hutchinson(Json& o, const FrobeniusEstimate* f, Index K, double sqrtN) {
  o[fields::kFrobeniusNorm] = f ? number_or_null(f->value) : Json(nullptr);
  o["frobenius_std_error"] = f ? number_or_null(f->std_error) : Json(nullptr);
  o["log10_frobenius_norm"] = f ? Json(f->log10_value) : Json(nullptr);
  o["hutchinson_probes"] = f ? f->probes : K;
  o["rms_gain"] = f ? number_or_null(f->value / sqrtN) : Json(nullptr);
  o["rms_gain_std_error"] = f ? number_or_null(f->std_error / sqrtN) : Json(nullptr);
}

// The summary's RMS gains: the per-layer estimate (product of the blocks' RMS gains) beside the true product's; h
// null: null, and `why` as their method.
void put_summary(Json& report, const HutchinsonSweep* h, double sqrtN, const std::string& why) {
  double log_gain_product = 0;
  if (h)
    for (const FrobeniusEstimate& b : h->block) log_gain_product += (b.log10_value - std::log10(sqrtN)) * std::log(10.0);
  Json& sum = report[fields::kSummary];
  sum[fields::kPerLayerRmsGainProduct] = h ? number_or_null(std::exp(log_gain_product)) : Json(nullptr);
  sum[fields::kBottomProductRmsGain] = report[fields::kLayers][0][fields::kProductJacobian]["rms_gain"];
  sum["rms_gain_method"] = h ? std::string("hutchinson") : why;
}

// The estimates into every layer's objects and the summary (the merge of a split run; the fields exist already).
void put_estimates(Json& report, const HutchinsonSweep& h, Index K, double sqrtN) {
  for (size_t l = 0; l < h.product.size(); ++l) {
    Json& layer = report[fields::kLayers][l];
    put_hutchinson(layer[fields::kBlockJacobian], &h.block[l], K, sqrtN);
    put_hutchinson(layer[fields::kProductJacobian], &h.product[l], K, sqrtN);
  }
  put_summary(report, &h, sqrtN, "");
}

// A task's share: its chunks of probes and, per chunk and layer, the sums the sweep adds ([diag, pairs, probes, exp2]).
Json partial_json(const HutchinsonSweep& h, Index begin, Index end, const ProbeChunking& pc, Index L, Index N) {
  const auto sums = [](const std::vector<ProbeSums>& v) {
    Json a = Json::array();
    for (const ProbeSums& q : v) a.push_back(Json::array({q.diag_sum, q.pair_squares, q.probes, q.exp2}));
    return a;
  };
  Json product = Json::array(), block = Json::array();
  for (const ProbeChunk& c : h.part) {
    product.push_back(sums(c.product));
    block.push_back(sums(c.block));
  }
  const Index first = begin < pc.chunks() ? pc.first(begin) : pc.probes;
  const Index last = end < pc.chunks() ? pc.first(end) : pc.probes;
  return Json{{"chunks", {begin, end}},  {"probes", {first, last}}, {"probes_total", pc.probes},
              {"probe_chunk", pc.per_chunk}, {"layers", L}, {"state_size", N},
              {"product", std::move(product)}, {"block", std::move(block)}};
}

// A task of a split run without the Lanczos values: the fields put_lanczos (and the B_l − I one) writes, null.
void put_lanczos_absent(Json& o, bool block) {
  o["spectral_norm"] = nullptr;
  o["log10_spectral_norm"] = nullptr;
  o["top_singular_values"] = nullptr;
  o["lanczos"] = "the plan's Lanczos task (gradflow merge takes its values)";
  if (block) o["minus_identity_spectral_norm"] = nullptr;
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
    // a task of a split run (analyze --plan): its chunks of probes, or the Lanczos values alone
    const RunPart& part = o.part;
    const ProbeChunking pc(K, o.probe_chunk);
    const ChunkRange range{part.chunk_begin, part.chunk_end};
    const bool lanczos = part.lanczos && !spectral.empty();
    const Index probes_run = range.whole() ? K : std::min(K, pc.first(range.end)) - std::min(K, pc.first(range.begin));
    // progress in units of one tangent through one block
    const Index total = 2 * probes_run * L + (lanczos ? lanczos_block_passes(L, spectral) : 0);
    Progress progress(part.whole() ? "matrix-free Jacobians" : "matrix-free Jacobians (this task's share)", total,
                      o.progress);

    // The model's own JVPs/VJPs, or with a device backend the same chain on its kernels
    // (jacobian_chains.hpp): Hutchinson's probes a chunk's stack at a time, Lanczos's one vector at a time
    JacobianChains chains(ctx, std::max<Index>(pc.per_chunk, 1));
    HutchinsonSweep h;
    const auto probes_done = [&](Index, Index count) { progress.step(2 * count); };
    if (K > 0) h = chains.hutchinson(K, o.probe_seed, true, probes_done, pc.per_chunk, range);
    const auto chain = [&](Index from, Index to, std::string what) { return chains.chain(from, to, std::move(what)); };

    // B_l: every layer whenever any spectral layer is asked (all L together cost about one P_0)
    std::vector<Json> blocks(static_cast<size_t>(L), Json::object()), products(static_cast<size_t>(L), Json::object());
    if (!spectral.empty() && !lanczos)  // the plan's Lanczos task computes them
      for (Index l = 0; l < L; ++l) {
        put_lanczos_absent(blocks[static_cast<size_t>(l)], true);
        if (std::binary_search(spectral.begin(), spectral.end(), l))
          put_lanczos_absent(products[static_cast<size_t>(l)], false);
      }
    if (lanczos)
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
    if (lanczos)
      for (Index l : spectral) {
        const std::unique_ptr<ChainOperator> P = chain(l, L, product_jacobian_name(l));
        put_lanczos(products[static_cast<size_t>(l)], chain_top_singular(*P, k, o.probe_seed), *P, k);
        progress.step(2 * kExpectedLanczosOps * (L - l));
      }
    const bool estimates = K > 0 && range.whole();
    for (Index l = 0; l < L; ++l) {
      Json& b = blocks[static_cast<size_t>(l)];
      Json& p = products[static_cast<size_t>(l)];
      const bool sp = !spectral.empty(), pp = std::binary_search(spectral.begin(), spectral.end(), l);
      if (K > 0) {
        put_hutchinson(b, estimates ? &h.block[static_cast<size_t>(l)] : nullptr, K, sqrtN);
        put_hutchinson(p, estimates ? &h.product[static_cast<size_t>(l)] : nullptr, K, sqrtN);
      }
      p["size"] = P_size;
      put_methods(b, sp, K > 0, false);
      if (sp && b["minus_identity_spectral_norm"].is_null() && lanczos)
        b["methods"]["minus_identity_spectral_norm"] = "undefined: B_" + std::to_string(l) + " is not square";
      put_methods(p, pp, K > 0, true);
      Json& layer = report["layers"][static_cast<size_t>(l)];
      layer["block_jacobian"] = std::move(b);
      layer["product_jacobian"] = std::move(p);
    }
    if (K > 0)
      put_summary(report, estimates ? &h : nullptr, sqrtN, "this task's probes only (gradflow merge adds every task's)");
    if (!part.whole()) {
      report[kPartialKey] = partial_json(h, range.whole() ? 0 : range.begin, range.whole() ? pc.chunks() : range.end,
                                         pc, L, N);
      seal_partial(report[kPartialKey]);  // the merge checks its numbers against it
    }
  }
};

// --- the merge of a split run's tasks (run/hutchinson_merge.hpp) --------------------------------------------------

bool is_index(const Json& j) { return j.is_number_integer(); }
Index index_of(const Json& j) { return static_cast<Index>(j.get<long long>()); }

// What every task of one run shares: the probes, their chunking, the depth, the state's size.
struct PartialShape {
  Index probes_total = 0, probe_chunk = 0, layers = 0, state_size = 0;
  bool operator==(const PartialShape& o) const {
    return probes_total == o.probes_total && probe_chunk == o.probe_chunk && layers == o.layers &&
           state_size == o.state_size;
  }
};

// Each chunk's [diag, pairs, probes, exp2] per layer: finite non-negative sums, the chunk's probe count.
std::string read_sums(const Json& j, const char* key, const ProbeChunking& pc, Index begin, Index end, Index L,
                      std::vector<ProbeChunk>* out, bool block) {
  if (!j.is_array() || static_cast<Index>(j.size()) != end - begin)
    return std::string("its \"") + key + "\" does not hold one entry per chunk";
  for (Index c = begin; c < end; ++c) {
    const Json& layers = j[static_cast<size_t>(c - begin)];
    if (!layers.is_array() || static_cast<Index>(layers.size()) != L)
      return std::string("its \"") + key + "\" of chunk " + std::to_string(c) + " is not one entry per layer";
    std::vector<ProbeSums> sums;
    for (const Json& q : layers) {
      if (!q.is_array() || q.size() != 4 || !q[0].is_number() || !q[1].is_number() || !is_index(q[2]) || !is_index(q[3]))
        return std::string("its \"") + key + "\" holds something other than [diagonal, pairs, probes, exponent] lists";
      ProbeSums s{q[0].get<double>(), q[1].get<double>(), index_of(q[2]), 0};
      const long long e = q[3].get<long long>();
      if (!std::isfinite(s.diag_sum) || s.diag_sum < 0 || !std::isfinite(s.pair_squares) || s.pair_squares < 0 ||
          s.probes != pc.count(c) || e < -100000000LL || e > 100000000LL)
        return std::string("its \"") + key + "\" of chunk " + std::to_string(c) + " holds sums that are not its probes'";
      s.exp2 = static_cast<long>(e);
      sums.push_back(s);
    }
    if (out) {
      ProbeChunk& r = (*out)[static_cast<size_t>(c - begin)];
      (block ? r.block : r.product) = std::move(sums);
      r.chunk = c;
    }
  }
  return "";
}

std::string read_partial(const Json& report, long long begin, long long end, PartialShape& sh,
                         std::vector<ProbeChunk>* chunks) {
  if (!report.is_object() || !report.contains(kPartialKey))
    return "it holds no \"hutchinson_partial\" (not a task's share of a split matrix-free run)";
  if (!report.contains(fields::kLayers) || !report[fields::kLayers].is_array()) return "it has no \"layers\"";
  const Json& p = report[kPartialKey];
  if (!p.is_object() || !p.contains("chunks") || !p["chunks"].is_array() || p["chunks"].size() != 2 ||
      !is_index(p["chunks"][0]) || !is_index(p["chunks"][1]))
    return "its \"hutchinson_partial\" has no [begin, end) \"chunks\"";
  if (p["chunks"][0].get<long long>() != begin || p["chunks"][1].get<long long>() != end)
    return "it holds chunks " + p["chunks"].dump() + ", not its task's [" + std::to_string(begin) + ", " +
           std::to_string(end) + "]";
  for (const char* k : {"probes_total", "probe_chunk", "layers", "state_size"})
    if (!p.contains(k) || !is_index(p[k]) || index_of(p[k]) < 1)
      return std::string("its \"") + k + "\" is not a positive integer";
  sh = PartialShape{index_of(p["probes_total"]), index_of(p["probe_chunk"]), index_of(p["layers"]),
                    index_of(p["state_size"])};
  if (sh.layers != static_cast<Index>(report[fields::kLayers].size()))
    return "its \"layers\" is not the report's depth";
  const ProbeChunking pc(sh.probes_total, sh.probe_chunk);
  if (pc.per_chunk != sh.probe_chunk) return "its \"probe_chunk\" is larger than its probes";
  if (begin < 0 || begin > end || end > pc.chunks()) return "its chunks lie outside its probes'";
  if (chunks) chunks->assign(static_cast<size_t>(end - begin), ProbeChunk{});
  std::string bad = read_sums(p.value("product", Json()), "product", pc, begin, end, sh.layers, chunks, false);
  if (bad.empty()) bad = read_sums(p.value("block", Json()), "block", pc, begin, end, sh.layers, chunks, true);
  return bad.empty() ? partial_digest_problem(p, kPartialKey) : bad;
}

}  // namespace

std::unique_ptr<Analysis> make_matrix_free_norms() { return std::make_unique<MatrixFreeNorms>(); }

std::string hutchinson_partial_problem(const Json& report, long long begin, long long end) {
  PartialShape shape;
  return read_partial(report, begin, end, shape, nullptr);
}

void merge_hutchinson_partials(Json& report, const std::vector<Json>& partials) {
  if (partials.empty()) throw Error("internal: a Hutchinson merge without tasks", ErrorKind::Internal);
  std::vector<ProbeChunk> all;
  PartialShape shape;
  ChunkCoverage covered;  // in probes
  for (size_t t = 0; t < partials.size(); ++t) {
    const Json& p = partials[t];
    const Index begin = index_of(p["chunks"][0]), end = index_of(p["chunks"][1]);
    const Json wrapped{{fields::kLayers, report[fields::kLayers]}, {kPartialKey, p}};
    PartialShape sh;
    std::vector<ProbeChunk> chunks;
    const std::string bad = read_partial(wrapped, begin, end, sh, &chunks);
    if (!bad.empty()) throw Error("internal: a Hutchinson partial that was checked: " + bad, ErrorKind::Internal);
    if (t == 0) shape = sh;
    require(sh == shape, "the tasks' Hutchinson shares are of different runs (chunks " + p["chunks"].dump() +
                             " against the first task's); fix: write the plan again and rerun every task");
    if (begin == end) continue;  // the Lanczos task: no probes
    const ProbeChunking pc(shape.probes_total, shape.probe_chunk);
    covered.add(begin, end, pc.first(begin), std::min(pc.probes, pc.first(end)), "Hutchinson");
    for (ProbeChunk& c : chunks) all.push_back(std::move(c));
  }
  report.erase(kPartialKey);
  const double sqrtN = std::sqrt(static_cast<double>(shape.state_size));
  if (covered.complete(ProbeChunking(shape.probes_total, shape.probe_chunk).chunks())) {
    put_estimates(report, hutchinson_from_chunks(all, shape.layers, true), shape.probes_total, sqrtN);
    return;
  }
  put_summary(report, nullptr, sqrtN, "not merged: tasks missing (--allow-partial)");
  report[fields::kSummary]["hutchinson_probes_covered"] = covered.json();
  report[fields::kSummary]["hutchinson_probes_total"] = shape.probes_total;
}
}  // namespace gradflow
