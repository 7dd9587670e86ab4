// test_hutchinson_chunks.cpp — Hutchinson's probes in chunks (--probe-chunk; src/matrix_free/hutchinson.cpp): a probe
// is the same numbers whatever the chunking; one chunk is the estimator of one stack (today's numbers); a sweep's
// parts, computed alone and put together in chunk order, give the whole sweep's estimates bit for bit (what a split
// matrix-free run's merge relies on); chunks at different power-of-two scales add as if at one; other chunkings
// estimate the same mean to rounding, with the standard error from the pairs within chunks.
#include <catch2/catch.hpp>

#include <cmath>

#include "gradflow/matrix_free/hutchinson.hpp"
#include "small_context.hpp"
#include "tolerances.hpp"

using namespace gradflow;
using namespace gradflow::test;

namespace {
void require_same(const FrobeniusEstimate& a, const FrobeniusEstimate& b) {
  REQUIRE(a.probes == b.probes);
  REQUIRE(a.value == b.value);
  REQUIRE(a.log10_value == b.log10_value);
  // NaN (no pair) equals NaN here
  REQUIRE(((std::isnan(a.std_error) && std::isnan(b.std_error)) || a.std_error == b.std_error));
}
}  // namespace

TEST_CASE("rademacher: any rows of the stream drawn alone are those rows of the whole", "[matrix_free]") {
  const Mat all = rademacher(3, "hutchinson:product", 40, 6);
  REQUIRE(rademacher(3, "hutchinson:product", 10, 6, 17) == all.middleRows(17, 10));
  REQUIRE(rademacher(3, "hutchinson:product", 40, 6, 0) == all);
}

TEST_CASE("probe chunking: chunks of C, the last one shorter, C above K or 0 is one chunk", "[matrix_free]") {
  const ProbeChunking pc(11, 4);
  REQUIRE(pc.chunks() == 3);
  REQUIRE(pc.first(2) == 8);
  REQUIRE(pc.count(2) == 3);
  REQUIRE(ProbeChunking(11, 64).chunks() == 1);
  REQUIRE(ProbeChunking(11, 64).per_chunk == 11);
  REQUIRE(ProbeChunking(11, 0).chunks() == 1);
  REQUIRE(ProbeChunking(0, 4).chunks() == 0);
}

TEST_CASE("frobenius_from_sums: one chunk is one stack's estimate, scales and pairs add across chunks",
          "[matrix_free]") {
  Mat W(3, 2);  // K = 3 probe images of n = 1 token, d = 2
  W << 1.0, 0.0, 1.0, 1.0, 0.5, -2.0;
  const FrobeniusEstimate whole = frobenius_from_probes(W, 1, 0);
  require_same(frobenius_from_sums({probe_sums_from_stack(W, 1, 0)}), whole);
  // chunks {w_1, w_2} and {w_3}: the mean over all three, the one pair of the first chunk
  const ProbeSums a = probe_sums_from_stack(W.topRows(2), 1, 0), b = probe_sums_from_stack(W.bottomRows(1), 1, 0);
  REQUIRE(b.pair_squares == 0);
  const FrobeniusEstimate split = frobenius_from_sums({a, b});
  REQUIRE(split.probes == 3);
  REQUIRE(split.value == Approx(whole.value).epsilon(kClosedFormTol));
  // T̂ = (w_1·w_2)² = 1 from one pair: SE(mean) = sqrt(2·1/3), SE(value) = SE(mean)/(2·value)
  REQUIRE(split.std_error == Approx(std::sqrt(2.0 / 3.0) / (2 * split.value)).epsilon(kClosedFormTol));
  // the second chunk kept at scale 2^10 (its stack 2^−10 as large): the same sums once rescaled, exactly
  const ProbeSums b_scaled = probe_sums_from_stack(W.bottomRows(1) * std::ldexp(1.0, -10), 1, 10);
  require_same(frobenius_from_sums({a, b_scaled}), [&] {
    ProbeSums a_up = probe_sums_from_stack(W.topRows(2) * std::ldexp(1.0, -10), 1, 10);
    return frobenius_from_sums({a_up, b_scaled});
  }());
  REQUIRE(frobenius_from_sums({a, b_scaled}).value == Approx(split.value).epsilon(kClosedFormTol));
  // chunks of one probe: no pair, no standard error
  REQUIRE(std::isnan(frobenius_from_sums({probe_sums_from_stack(W.topRows(1), 1, 0), b}).std_error));
}

TEST_CASE("Hutchinson sweep in chunks: parts put together equal the whole sweep bit for bit", "[matrix_free]") {
  for (const char* placement : {"post", "resi-dual"}) {
    auto s = make_small_context(placement, 3);
    const AnalysisContext& ctx = *s.ctx;
    const Index L = ctx.model.layers(), K = 11, C = 3;
    INFO(placement);
    // one chunk (the default) is the chunking C >= K
    const HutchinsonSweep one = hutchinson_frobenius(ctx.model, ctx.trace, K, 5, true);
    const HutchinsonSweep one64 = hutchinson_frobenius(ctx.model, ctx.trace, K, 5, true, {}, 64);
    const HutchinsonSweep whole = hutchinson_frobenius(ctx.model, ctx.trace, K, 5, true, {}, C);
    Index calls = 0, probes = 0;
    const auto count = [&](Index, Index k) { ++calls; probes += k; };
    const HutchinsonSweep p1 = hutchinson_frobenius(ctx.model, ctx.trace, K, 5, true, count, C, ChunkRange{0, 1});
    const HutchinsonSweep p2 = hutchinson_frobenius(ctx.model, ctx.trace, K, 5, true, count, C, ChunkRange{1, 4});
    REQUIRE(calls == 4 * L);        // each chunk through each block
    REQUIRE(probes == K * L);       // each probe through each block once
    REQUIRE(p1.product.empty());    // a part has no estimates ...
    REQUIRE(p2.part.size() == 3);   // ... only its chunks' records
    std::vector<ProbeChunk> all = p1.part;
    all.insert(all.end(), p2.part.begin(), p2.part.end());
    const HutchinsonSweep merged = hutchinson_from_chunks(all, L, true);
    for (Index l = 0; l < L; ++l) {
      const size_t i = static_cast<size_t>(l);
      require_same(one64.product[i], one.product[i]);
      require_same(one64.block[i], one.block[i]);
      require_same(merged.product[i], whole.product[i]);
      require_same(merged.block[i], whole.block[i]);
      // the same probes: the mean agrees with one chunk's to rounding; the error from fewer pairs, still positive
      REQUIRE(whole.product[i].value == Approx(one.product[i].value).epsilon(kClosedFormChainTol));
      REQUIRE(whole.block[i].value == Approx(one.block[i].value).epsilon(kClosedFormChainTol));
      REQUIRE(whole.product[i].std_error > 0);
    }
    // a range outside the chunks is an internal error; records out of order too
    REQUIRE_THROWS_AS(hutchinson_frobenius(ctx.model, ctx.trace, K, 5, true, {}, C, ChunkRange{2, 5}), Error);
    std::swap(all[0], all[1]);
    REQUIRE_THROWS_AS(hutchinson_from_chunks(all, L, true), Error);
  }
}
