// streamed_norms.cpp — the Frobenius norms of jacobian_norms.cpp, EXACT, without forming a matrix (--mode streamed):
// ‖P_l‖_F and ‖B_l‖_F for every l from chunks of --stream-rows identity rows pushed down the VJP chain
// (matrix_free/streamed.hpp), in the fields explicit mode uses, each with method "exact (streamed)"; plus the exact
// mean of σ² (‖·‖_F²/N, the dynamical isometry statistic). Spectral norms, σ_min and the rank need singular values:
// null here (explicit or matrix-free mode). With --device cuda the chain runs on the GPU's kernels
// (matrix_free/device_chain.hpp; the forward pass stays on the CPU). A task of a split run (analyze --plan) computes
// its chunks alone and reports their sums ("streamed_partial"); merge_streamed_partials (run/streamed_merge.hpp)
// writes the norms from every task's.
#include <algorithm>
#include <cmath>

#include "jacobian_chains.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/report/progress.hpp"
#include "gradflow/run/partial_digest.hpp"
#include "gradflow/run/analysis.hpp"
#include "gradflow/run/chunk_coverage.hpp"
#include "gradflow/run/streamed_merge.hpp"

namespace gradflow {
namespace {

constexpr const char* kStreamedMethod = "exact (streamed)";
constexpr const char* kPartialKey = "streamed_partial";

// JSON cannot hold ±Inf/NaN: those become null (the log10_ fields stay finite).
Json number_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json norms_json(const ExactNorm& e) {
  return Json{{fields::kFrobeniusNorm, number_or_null(e.value)},
              {"log10_frobenius_norm", number_or_null(e.log10_value)},
              {"rms_gain", number_or_null(e.rms_gain)},
              {"mean_squared_singular_value", number_or_null(e.mean_sq_singular)},
              {"method", kStreamedMethod}};
}

// The norms of a whole sweep into the report's fields; s == null: the same fields with null norms and `why` as their
// method (a task's share of a split run, or a merge missing tasks), in the same places.
void write_norms(Json& report, const StreamedSweep* s, const StreamedShape& shape, Index product_size,
                 const std::string& why) {
  const Index L = static_cast<Index>(report[fields::kLayers].size()), N = shape.state_rows;
  const bool blocks = !shape.block_rows.empty();  // --stream-blocks off: ‖P_l‖_F only, half the work
  const Json absent{{fields::kFrobeniusNorm, nullptr}, {"method", why}};
  double log_gain_product = 0;
  for (Index l = 0; l < L; ++l) {
    Json& layer = report[fields::kLayers][static_cast<size_t>(l)];
    if (!blocks) {
      layer[fields::kBlockJacobian] = Json{{fields::kFrobeniusNorm, nullptr}, {"method", "not computed (--stream-blocks off)"}};
    } else if (s) {
      const ExactNorm& b = s->block[static_cast<size_t>(l)];
      layer[fields::kBlockJacobian] = norms_json(b);
      log_gain_product += (b.log10_value - 0.5 * std::log10(static_cast<double>(N))) * std::log(10.0);
    } else {
      layer[fields::kBlockJacobian] = absent;
    }
    Json p = s ? norms_json(s->product[static_cast<size_t>(l)]) : absent;
    p["size"] = product_size;
    layer[fields::kProductJacobian] = std::move(p);
  }
  Json& sum = report[fields::kSummary];
  // the per-layer estimate (product of the blocks' RMS gains) beside the true product's RMS gain
  sum[fields::kPerLayerRmsGainProduct] = blocks && s ? number_or_null(std::exp(log_gain_product)) : Json(nullptr);
  sum[fields::kBottomProductRmsGain] = report[fields::kLayers][0][fields::kProductJacobian].value("rms_gain", Json());
  sum["rms_gain_method"] = s ? std::string(kStreamedMethod) : why;
  sum["stream_rows"] = shape.rows_per_chunk;
  sum["stream_chunks"] = shape.chunks();
}

Json shape_json(const StreamedShape& sh) {
  return Json{{"out_rows", sh.out_rows}, {"state_rows", sh.state_rows}, {"block_rows", sh.block_rows},
              {"rows_per_chunk", sh.rows_per_chunk}, {"chunks", sh.chunks()}};
}

// A task's share: its chunks and, per chunk, each layer's [mantissa, exp2] as the sweep added it.
Json partial_json(const StreamedSweep& s, Index begin, Index end, Index product_size) {
  const auto pairs = [](const std::vector<SquareSum>& sums) {
    Json a = Json::array();
    for (const SquareSum& q : sums) a.push_back(Json::array({q.mantissa, q.exp2}));
    return a;
  };
  Json product = Json::array(), block = Json::array();
  for (const ChunkSquares& c : s.part) {
    product.push_back(pairs(c.product));
    block.push_back(pairs(c.block));
  }
  const Index total = s.shape.total_rows(), K = s.shape.rows_per_chunk;
  Json j{{"chunks", {begin, end}},
         {"rows", {begin * K, std::min(end * K, total)}},
         {"shape", shape_json(s.shape)},
         {"product_size", product_size},
         {"product", std::move(product)}};
  if (!s.shape.block_rows.empty()) j["block"] = std::move(block);
  return j;
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
    const Index L = ctx.model.layers(), N = ctx.tokens() * ctx.width(), K = ctx.opts.stream_rows;
    const bool blocks = ctx.opts.stream_blocks;
    const RunPart& part = ctx.opts.part;
    const ChunkRange range{part.chunk_begin, part.chunk_end};
    // progress in units of one cotangent through one block (each row goes through block l twice: P_l and B_l)
    const Index per_row = blocks ? 2 : 1;
    const Index rows = range.whole() ? N : std::min(N, K * (range.end - range.begin));
    Progress progress(range.whole() ? "streamed exact Jacobian norms" : "streamed exact Jacobian norms (this task's rows)",
                      per_row * rows * L, ctx.opts.progress);
    const auto step = [&](Index, Index k) { progress.step(per_row * k); };
    // the model's own VJPs, or the chain on a device's kernels (the trace uploaded once, the stacks stay there)
    const StreamedSweep s = JacobianChains(ctx, std::min(K, N)).streamed(K, blocks, step, range);
    if (range.whole()) {
      write_norms(report, &s, s.shape, ctx.product_size(), "");
      return;
    }
    write_norms(report, nullptr, s.shape, ctx.product_size(), "this task's rows only (gradflow merge adds every task's)");
    report[kPartialKey] = partial_json(s, range.begin, range.end, ctx.product_size());
    seal_partial(report[kPartialKey]);  // the merge checks its numbers against it
  }
};

// --- the merge of a split run's tasks (run/streamed_merge.hpp) ----------------------------------------------------

bool is_index(const Json& j) { return j.is_number_integer(); }
Index index_of(const Json& j) { return static_cast<Index>(j.get<long long>()); }

// The shape a partial records, or "" -> problem text.
std::string read_shape(const Json& j, Index L, StreamedShape& sh) {
  if (!j.is_object()) return "its \"shape\" is not an object";
  for (const char* k : {"out_rows", "state_rows", "rows_per_chunk", "chunks"})
    if (!j.contains(k) || !is_index(j[k]) || index_of(j[k]) < 1) return std::string("its shape's \"") + k + "\" is not a positive integer";
  if (!j.contains("block_rows") || !j["block_rows"].is_array()) return "its shape's \"block_rows\" is not a list";
  sh.out_rows = index_of(j["out_rows"]);
  sh.state_rows = index_of(j["state_rows"]);
  sh.rows_per_chunk = index_of(j["rows_per_chunk"]);
  sh.block_rows.clear();
  for (const Json& b : j["block_rows"]) {
    if (!is_index(b) || index_of(b) < 1) return "its shape's \"block_rows\" holds something other than row counts";
    sh.block_rows.push_back(index_of(b));
  }
  if (!sh.block_rows.empty() && static_cast<Index>(sh.block_rows.size()) != L)
    return "its shape has " + std::to_string(sh.block_rows.size()) + " blocks' rows for " + std::to_string(L) + " layers";
  if (sh.chunks() != index_of(j["chunks"])) return "its shape's \"chunks\" does not follow from its rows";
  return "";
}

// Each chunk's [mantissa, exp2] per layer: a mantissa 0 or in [0.5, 1) (SquareSum's form), an integer exponent.
std::string read_squares(const Json& j, const char* key, Index chunks, Index L, Index begin,
                         std::vector<ChunkSquares>* out, bool block) {
  if (!j.is_array() || static_cast<Index>(j.size()) != chunks)
    return std::string("its \"") + key + "\" does not hold one entry per chunk";
  for (Index c = 0; c < chunks; ++c) {
    const Json& layers = j[static_cast<size_t>(c)];
    if (!layers.is_array() || static_cast<Index>(layers.size()) != L)
      return std::string("its \"") + key + "\" of chunk " + std::to_string(begin + c) + " is not one entry per layer";
    std::vector<SquareSum> sums;
    for (const Json& q : layers) {
      if (!q.is_array() || q.size() != 2 || !q[0].is_number() || !is_index(q[1]))
        return std::string("its \"") + key + "\" holds something other than [mantissa, exponent] pairs";
      const double m = q[0].get<double>();
      const long long e = q[1].get<long long>();
      if (!(m == 0 || (m >= 0.5 && m < 1)) || e < -100000000LL || e > 100000000LL)
        return std::string("its \"") + key + "\" holds a pair that is not a sum of squares' mantissa and exponent";
      sums.push_back(SquareSum{m, static_cast<long>(e)});
    }
    if (out) {
      ChunkSquares& r = (*out)[static_cast<size_t>(c)];
      (block ? r.block : r.product) = std::move(sums);
      r.chunk = begin + c;
    }
  }
  return "";
}

// The partial's shape and chunks, or a problem.
std::string read_partial(const Json& report, long long begin, long long end, StreamedShape& shape,
                         std::vector<ChunkSquares>* chunks) {
  if (!report.is_object() || !report.contains(kPartialKey)) return "it holds no \"streamed_partial\" (not a task's share of a split streamed run)";
  if (!report.contains(fields::kLayers) || !report[fields::kLayers].is_array()) return "it has no \"layers\"";
  const Json& p = report[kPartialKey];
  const Index L = static_cast<Index>(report[fields::kLayers].size());
  if (!p.is_object() || !p.contains("chunks") || !p["chunks"].is_array() || p["chunks"].size() != 2 ||
      !is_index(p["chunks"][0]) || !is_index(p["chunks"][1]))
    return "its \"streamed_partial\" has no [begin, end) \"chunks\"";
  if (p["chunks"][0].get<long long>() != begin || p["chunks"][1].get<long long>() != end)
    return "it holds chunks " + p["chunks"].dump() + ", not its task's [" + std::to_string(begin) + ", " +
           std::to_string(end) + "]";
  std::string bad = read_shape(p.value("shape", Json()), L, shape);
  if (!bad.empty()) return bad;
  if (begin < 0 || begin >= end || end > shape.chunks()) return "its chunks lie outside its shape's";
  if (!p.contains("product_size") || !is_index(p["product_size"])) return "its \"product_size\" is not an integer";
  if (chunks) chunks->assign(static_cast<size_t>(end - begin), ChunkSquares{});
  bad = read_squares(p.value("product", Json()), "product", end - begin, L, begin, chunks, false);
  if (bad.empty() && !shape.block_rows.empty())
    bad = read_squares(p.value("block", Json()), "block", end - begin, L, begin, chunks, true);
  else if (bad.empty() && p.contains("block"))
    bad = "it holds blocks' squares without blocks' rows";
  return bad.empty() ? partial_digest_problem(p, kPartialKey) : bad;
}

}  // namespace

std::unique_ptr<Analysis> make_streamed_norms() { return std::make_unique<StreamedNorms>(); }

std::string streamed_partial_problem(const Json& report, long long begin, long long end) {
  StreamedShape shape;
  return read_partial(report, begin, end, shape, nullptr);
}

void merge_streamed_partials(Json& report, const std::vector<Json>& partials) {
  if (partials.empty()) throw Error("internal: a streamed merge without tasks", ErrorKind::Internal);
  std::vector<ChunkSquares> all;
  StreamedShape shape;
  Index product_size = 0;
  ChunkCoverage covered;  // in identity rows
  for (size_t t = 0; t < partials.size(); ++t) {
    const Json& p = partials[t];
    const Index begin = index_of(p["chunks"][0]), end = index_of(p["chunks"][1]);
    Json wrapped{{fields::kLayers, report[fields::kLayers]}, {kPartialKey, p}};
    StreamedShape sh;
    std::vector<ChunkSquares> chunks;
    const std::string bad = read_partial(wrapped, begin, end, sh, &chunks);
    if (!bad.empty()) throw Error("internal: a streamed partial that was checked: " + bad, ErrorKind::Internal);
    if (t == 0) {
      shape = sh;
      product_size = index_of(p["product_size"]);
    }
    require(sh == shape && index_of(p["product_size"]) == product_size,
            "the tasks' streamed shares are of different sweeps (chunks " + p["chunks"].dump() + " against the first "
            "task's); fix: write the plan again and rerun every task");
    const Index K = shape.rows_per_chunk, total = shape.total_rows();
    covered.add(begin, end, begin * K, std::min(end * K, total), "streamed");
    for (ChunkSquares& c : chunks) all.push_back(std::move(c));
  }
  report.erase(kPartialKey);
  if (covered.complete(shape.chunks())) {
    const StreamedSweep s = streamed_from_chunks(shape, all);
    write_norms(report, &s, shape, product_size, "");
    return;
  }
  write_norms(report, nullptr, shape, product_size, "not merged: tasks missing (--allow-partial)");
  report[fields::kSummary]["streamed_rows_covered"] = covered.json();
  report[fields::kSummary]["streamed_rows_total"] = shape.total_rows();
}

}  // namespace gradflow
