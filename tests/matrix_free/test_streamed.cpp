// test_streamed.cpp — exact Frobenius norms from streamed identity rows (src/matrix_free/streamed.cpp): ‖P_l‖_F and
// ‖B_l‖_F equal those of the explicit Jacobians (context.cpp) to kCrossTol for every placement, with and without a
// final norm, causal or not, for a chunk size that does not divide N, one equal to N and one above it; the chunk
// size changes only the order of the sums; the power-of-two sum keeps norms far beyond a double.
#include <catch2/catch.hpp>

#include <cmath>

#include "gradflow/core/error.hpp"
#include "gradflow/linalg/svd.hpp"
#include "gradflow/matrix_free/streamed.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/model/placement.hpp"
#include "gradflow/run/context.hpp"
#include "small_context.hpp"
#include "small_model.hpp"
#include "tolerances.hpp"

using namespace gradflow;
using namespace gradflow::test;

namespace {
double rel(double a, double b) { return std::abs(a - b) / std::abs(b); }
}  // namespace

TEST_CASE("SquareSum adds mantissa·2^e terms exactly in range and beyond a double", "[matrix_free]") {
  SquareSum s;
  REQUIRE(s.value() == 0);
  REQUIRE(std::isinf(s.log10()));
  s.add(3.0, 0);
  s.add(0.0, 5000);  // zero terms are skipped whatever their scale
  s.add(5.0, 2);     // 3 + 20
  REQUIRE(s.value() == 23.0);
  const ExactNorm e = exact_norm_from(s, 4);
  REQUIRE(e.value == Approx(std::sqrt(23.0)).epsilon(kClosedFormTol));
  REQUIRE(e.mean_sq_singular == Approx(23.0 / 4).epsilon(kClosedFormTol));
  REQUIRE(e.rms_gain == Approx(std::sqrt(23.0) / 2).epsilon(kClosedFormTol));
  SquareSum big;
  big.add(1.0, 3000);
  big.add(1.0, 3000);  // 2^3001: beyond a double, its square root 2^1500.5 too
  REQUIRE(std::isinf(big.value()));
  REQUIRE(big.log10() == Approx(3001 * std::log10(2.0)).epsilon(kClosedFormTol));
  const ExactNorm eb = exact_norm_from(big, 1);
  REQUIRE(std::isinf(eb.value));
  REQUIRE(eb.log10_value == Approx(1500.5 * std::log10(2.0)).epsilon(kClosedFormTol));
  SquareSum odd;
  odd.add(1.0, -1001);  // sqrt(2^-1001) = 2^-500.5, representable: the exponent halves exactly
  REQUIRE(exact_norm_from(odd, 1).value == Approx(std::ldexp(std::sqrt(0.5), -500)).epsilon(kClosedFormTol));
}

TEST_CASE("streamed ‖P_l‖_F and ‖B_l‖_F equal the explicit Jacobians' for every placement", "[matrix_free]") {
  const Index n = 4, d = 8, N = n * d;  // small_model: d = 8
  int cases = 0;
  for (const auto& p : placements())
    for (const bool final_norm : {false, true})
      for (const bool causal : {false, true}) {
        ModelConfig cfg = small_model(p->name(), 3);
        cfg.final_norm = final_norm;
        cfg.causal = causal;
        if (causal) {  // a decoder block: multi-query heads with RoPE, a soft-cap, QK-norm, SwiGLU (the engines' JVPs)
          cfg.kv_heads = 1;
          cfg.rope = true;
          cfg.attn_softcap = 3.0;
          if (p->name().rfind("hybridnorm", 0) != 0) cfg.qk_norm = QkNorm::Head;
          cfg.ffn = FeedForwardKind::SwiGLU;
        }
        if (!final_norm && p->name() == "resi-dual") {  // its output y = x_a + LN(x_d) needs the final norm
          REQUIRE_THROWS_WITH(Model(cfg), Catch::Contains("--no-final-norm"));
          ++cases;
          continue;
        }
        Model model(cfg);
        InitConfig init;
        init.seed = 7;
        initialize(model, init);
        AnalysisOptions opts;
        opts.seq_len = n;
        opts.progress = false;
        const AnalysisContext ctx(model, random_normal(7, "input", n, d), opts, make_backend(BackendKind::Cpu),
                                  nullptr, 7);
        REQUIRE(model.has_final_norm() == final_norm);
        std::vector<double> eB(3), eP(3);
        ctx.for_each_product([&](Index l, const Mat& B, const Mat& P) {
          eB[static_cast<size_t>(l)] = frobenius_norm(B);
          eP[static_cast<size_t>(l)] = frobenius_norm(P);
        });
        // the state's size: N, or 2N for resi-dual's pair (B_l has 2N rows below the top; P_l N rows, 2N columns)
        const Index Ns = n * model.state_width();
        for (const Index K : {Index{5}, N, Index{1000}}) {  // 5 does not divide 32; N; above N
          const StreamedSweep s = streamed_frobenius(model, ctx.trace, K, true);
          INFO(p->name() << (final_norm ? " final norm" : " no final norm") << (causal ? " causal" : "") << " K " << K);
          REQUIRE(s.rows_per_chunk == std::min(K, Ns));
          REQUIRE(s.chunks == (Ns + s.rows_per_chunk - 1) / s.rows_per_chunk);
          for (size_t l = 0; l < 3; ++l) {
            INFO("layer " << l << ": P " << s.product[l].value << " vs " << eP[l] << ", B " << s.block[l].value
                          << " vs " << eB[l]);
            CHECK(rel(s.product[l].value, eP[l]) < kCrossTol);
            CHECK(rel(s.block[l].value, eB[l]) < kCrossTol);
            CHECK(rel(s.product[l].mean_sq_singular, eP[l] * eP[l] / N) < kCrossTol);  // P_l's N singular values
            CHECK(rel(s.product[l].rms_gain, eP[l] / std::sqrt(double(Ns))) < kCrossTol);  // per input direction
          }
        }
        ++cases;
      }
  REQUIRE(cases == 4 * static_cast<int>(placements().size()));
}

TEST_CASE("streamed norms: the chunk size changes only the summation order, the same K the same bits", "[matrix_free]") {
  ModelConfig cfg = small_model("pre", 4);
  Model model(cfg);
  InitConfig init;
  init.seed = 2;
  initialize(model, init);
  AnalysisOptions opts;
  opts.seq_len = 5;
  opts.progress = false;
  const AnalysisContext ctx(model, random_normal(2, "input", 5, 8), opts, make_backend(BackendKind::Cpu), nullptr, 2);
  const StreamedSweep a = streamed_frobenius(model, ctx.trace, 1, true), b = streamed_frobenius(model, ctx.trace, 7, true);
  const StreamedSweep b2 = streamed_frobenius(model, ctx.trace, 7, true);
  for (size_t l = 0; l < 4; ++l) {
    CHECK(rel(a.product[l].value, b.product[l].value) < kAlgebraTol);
    CHECK(rel(a.block[l].value, b.block[l].value) < kAlgebraTol);
    CHECK(b.product[l].value == b2.product[l].value);
    CHECK(b.block[l].value == b2.block[l].value);
  }
  REQUIRE_THROWS_AS(streamed_frobenius(model, ctx.trace, 0, true), Error);
}

namespace {
// The chunk ranges of `tasks` contiguous parts of `chunks` chunks, as even as they go (analyze --plan's split).
std::vector<ChunkRange> split_ranges(Index chunks, Index tasks) {
  std::vector<ChunkRange> r;
  for (Index t = 0; t < tasks; ++t) r.push_back(ChunkRange{t * chunks / tasks, (t + 1) * chunks / tasks});
  return r;
}
bool same_bits(const ExactNorm& a, const ExactNorm& b) {
  return a.value == b.value && a.log10_value == b.log10_value && a.mean_sq_singular == b.mean_sq_singular &&
         a.rms_gain == b.rms_gain;
}
}  // namespace

TEST_CASE("streamed norms split into chunk ranges and merged in chunk order equal the whole sweep bit for bit",
          "[matrix_free]") {
  // every placement family: one stream, two (resi-dual: B_l has 2N rows below the top), the parallel residual,
  // a gated unit; K that divides the rows, one that does not, one row per chunk
  for (const char* placement : {"post", "pre", "resi-dual", "parallel", "deepnorm", "peri"}) {
    const SmallContext sc = make_small_context(placement, 3, 11);
    const Model& model = *sc.model;
    const AnalysisContext& ctx = *sc.ctx;
    for (const bool blocks : {true, false})
      for (const Index K : {Index{1}, Index{5}, Index{8}}) {
        const StreamedSweep whole = streamed_frobenius(model, ctx.trace, K, blocks);
        REQUIRE(whole.part.empty());
        for (const Index tasks : {Index{1}, Index{3}, Index{7}}) {
          if (tasks > whole.chunks) continue;
          INFO(placement << (blocks ? " with blocks" : " P_l only") << ", K " << K << ", " << tasks << " tasks of "
                         << whole.chunks << " chunks");
          std::vector<ChunkSquares> records;
          // the parts in reverse order (tasks finish in any order); the records are put back in chunk order
          const std::vector<ChunkRange> ranges = split_ranges(whole.chunks, tasks);
          std::vector<std::vector<ChunkSquares>> parts(ranges.size());
          for (size_t t = ranges.size(); t-- > 0;) {
            StreamedSweep s = streamed_frobenius(model, ctx.trace, K, blocks, {}, ranges[t]);
            REQUIRE(s.product.empty());
            REQUIRE(s.shape == whole.shape);
            REQUIRE(static_cast<Index>(s.part.size()) == ranges[t].end - ranges[t].begin);
            parts[t] = std::move(s.part);
          }
          for (auto& p : parts)
            for (auto& c : p) records.push_back(std::move(c));
          const StreamedSweep merged = streamed_from_chunks(whole.shape, records);
          REQUIRE(merged.product.size() == whole.product.size());
          REQUIRE(merged.block.size() == whole.block.size());
          for (size_t l = 0; l < whole.product.size(); ++l) CHECK(same_bits(merged.product[l], whole.product[l]));
          for (size_t l = 0; l < whole.block.size(); ++l) CHECK(same_bits(merged.block[l], whole.block[l]));
          CHECK(merged.chunks == whole.chunks);
          CHECK(merged.rows_per_chunk == whole.rows_per_chunk);
        }
      }
  }
}

TEST_CASE("streamed chunk records: a missing, repeated or foreign chunk is refused, a range outside the sweep too",
          "[matrix_free]") {
  const SmallContext sc = make_small_context("pre", 2, 3);
  const Model& model = *sc.model;
  const AnalysisContext& ctx = *sc.ctx;
  const StreamedSweep all = streamed_frobenius(model, ctx.trace, 8, true, {}, ChunkRange{0, 4});  // 32 rows: 4 chunks
  REQUIRE(all.part.size() == 4);
  std::vector<ChunkSquares> missing(all.part.begin(), all.part.begin() + 3);
  REQUIRE_THROWS_AS(streamed_from_chunks(all.shape, missing), Error);
  std::vector<ChunkSquares> swapped = all.part;
  std::swap(swapped[1], swapped[2]);
  REQUIRE_THROWS_AS(streamed_from_chunks(all.shape, swapped), Error);
  std::vector<ChunkSquares> shallow = all.part;
  shallow[2].product.pop_back();  // a record of another depth
  REQUIRE_THROWS_AS(streamed_from_chunks(all.shape, shallow), Error);
  REQUIRE_NOTHROW(streamed_from_chunks(all.shape, all.part));
  REQUIRE_THROWS_AS(streamed_frobenius(model, ctx.trace, 8, true, {}, ChunkRange{3, 5}), Error);  // past the last
  REQUIRE_THROWS_AS(streamed_frobenius(model, ctx.trace, 8, true, {}, ChunkRange{2, 2}), Error);  // empty
}
