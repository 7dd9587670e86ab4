// test_rng_parallel.cpp — fill_uniform / fill_normal fill ranges of elements in parallel, each from the stream's
// state after the draws before it (SplitMix64 is counter-based). They must give exactly what the one-by-one loop of
// uniform() / normal() gives, and leave the stream where that loop leaves it: at any thread count, any range size
// (grain), with a waiting Box-Muller spare at the start, an odd count (a spare left at the end), and when a u1 of
// exactly 0 forces the loop to redraw (the parallel fill cannot know that offset and must fall back).
#include <catch2/catch.hpp>
#include <omp.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "gradflow/core/rng.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/model/model.hpp"

using namespace gradflow;

namespace {

constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;

// Restores the thread count and the fill grain at the end of a test.
struct Restore {
  int threads = omp_get_max_threads();
  ~Restore() {
    omp_set_num_threads(threads);
    Rng::set_fill_grain(Index(1) << 15);
  }
};

Mat loop_uniform(Rng& r, Index rows, Index cols, double lo, double hi) {
  Mat m(rows, cols);
  for (Index i = 0; i < rows; ++i)
    for (Index j = 0; j < cols; ++j) m(i, j) = r.uniform(lo, hi);
  return m;
}

Mat loop_normal(Rng& r, Index rows, Index cols, double stddev) {
  Mat m(rows, cols);
  for (Index i = 0; i < rows; ++i)
    for (Index j = 0; j < cols; ++j) m(i, j) = stddev * r.normal();
  return m;
}

bool same_bits(const Mat& a, const Mat& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
  for (Index k = 0; k < a.size(); ++k)
    if (std::memcmp(a.data() + k, b.data() + k, sizeof(double)) != 0) return false;
  return true;
}

// SplitMix64's output function and its inverse (xor-shifts and multiplications by odd constants are bijective).
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
uint64_t unshift(uint64_t y, int s) {
  uint64_t x = y;
  for (int k = 0; k < 64 / s + 1; ++k) x = y ^ (x >> s);
  return x;
}
uint64_t inverse_odd(uint64_t c) {
  uint64_t inv = c;
  for (int k = 0; k < 6; ++k) inv *= 2 - c * inv;
  return inv;
}
uint64_t unmix(uint64_t y) {
  uint64_t z = unshift(y, 31) * inverse_odd(0x94D049BB133111EBull);
  z = unshift(z, 27) * inverse_odd(0xBF58476D1CE4E5B9ull);
  return unshift(z, 30);
}
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// A seed whose stream `name` draws the 64-bit word 0 (a uniform of exactly 0) as its word number `k` (0-based).
uint64_t seed_with_zero_word(const std::string& name, uint64_t k) {
  // word k is mix(state + (k + 1)·γ) with state = mix(seed ^ fnv1a(name) + γ); mix(0) = 0
  const uint64_t state = 0 - (k + 1) * kGamma;
  return (unmix(state) - kGamma) ^ fnv1a(name);
}

}  // namespace

TEST_CASE("rng: parallel fills equal the one-by-one loop at any thread count and range size", "[core][rng][quick]") {
  Restore restore;
  for (int threads : {1, 2, 3}) {
    for (Index grain : {Index(1), Index(2), Index(3), Index(7), Index(64), Index(1) << 15}) {
      omp_set_num_threads(threads);
      Rng::set_fill_grain(grain);
      for (const auto& [rows, cols] : {std::pair<Index, Index>{1, 1}, {3, 5}, {17, 9}, {40, 33}}) {
        INFO(threads << " threads, grain " << grain << ", " << rows << "x" << cols);
        Rng a(3, "u"), b(3, "u");
        Mat m(rows, cols);
        a.fill_uniform(m, -0.7, 0.3);
        REQUIRE(same_bits(m, loop_uniform(b, rows, cols, -0.7, 0.3)));
        REQUIRE(a.next_u64() == b.next_u64());  // the stream goes on from the same place
        for (bool spare_first : {false, true}) {
          Rng c(4, "n"), d(4, "n");
          if (spare_first) REQUIRE(c.normal() == d.normal());  // a spare waits
          Mat g(rows, cols);
          c.fill_normal(g, 0.02);
          REQUIRE(same_bits(g, loop_normal(d, rows, cols, 0.02)));
          REQUIRE(c.normal() == d.normal());  // an odd count leaves the same spare
          REQUIRE(c.normal() == d.normal());
          REQUIRE(c.next_u64() == d.next_u64());
        }
      }
    }
  }
}

TEST_CASE("rng: a fill through blocks of a larger matrix writes only the block, in its row-major order", "[core][rng][quick]") {
  Restore restore;
  omp_set_num_threads(2);
  Rng::set_fill_grain(5);
  Mat big = Mat::Constant(9, 11, 42.0), ref = big;
  Rng a(8, "block"), b(8, "block");
  a.fill_uniform(big.block(2, 3, 4, 6), 0.0, 1.0);
  ref.block(2, 3, 4, 6) = loop_uniform(b, 4, 6, 0.0, 1.0);
  REQUIRE(same_bits(big, ref));
  a.fill_normal(big.middleRows(5, 3), 1.0);
  ref.middleRows(5, 3) = loop_normal(b, 3, 11, 1.0);
  REQUIRE(same_bits(big, ref));
}

TEST_CASE("rng: a u1 of exactly 0 (redrawn by normal()) makes the parallel fill give the loop's values", "[core][rng][quick]") {
  Restore restore;
  // the constructed seed really draws a 0 word where asked
  for (uint64_t k : {0ull, 5ull, 40ull}) {
    Rng r(seed_with_zero_word("zero", k), "zero");
    for (uint64_t w = 0; w < k; ++w) r.next_u64();
    REQUIRE(r.next_u64() == 0);
  }
  omp_set_num_threads(2);
  Rng::set_fill_grain(4);
  // word 2q is u1 of pair q: at word 40, pair 20 redraws, and every later pair (in other ranges) shifts by one word
  for (uint64_t k : {0ull, 6ull, 40ull, 41ull}) {
    INFO("zero word at " << k);
    const uint64_t seed = seed_with_zero_word("zero", k);
    Rng a(seed, "zero"), b(seed, "zero");
    Mat g(7, 9);
    a.fill_normal(g, 1.0);
    REQUIRE(same_bits(g, loop_normal(b, 7, 9, 1.0)));
    REQUIRE(a.normal() == b.normal());
    REQUIRE(a.next_u64() == b.next_u64());
  }
}

TEST_CASE("initialize: every scheme gives the same parameters at 1 and 2 threads and any fill range size", "[core][rng][quick]") {
  Restore restore;
  ModelConfig cfg;
  cfg.placement = "post";
  cfg.layers = 2;
  cfg.d_model = 16;
  cfg.heads = 2;
  for (const std::string& scheme : init_schemes()) {
    INFO(scheme);
    InitConfig init;
    init.scheme = scheme;
    init.seed = 9;
    std::vector<Mat> first;
    for (const auto& [threads, grain] : {std::pair<int, Index>{1, Index(1) << 15}, {2, Index(1) << 15}, {2, 7}, {1, 3}}) {
      omp_set_num_threads(threads);
      Rng::set_fill_grain(grain);
      Model m(cfg);
      initialize(m, init);
      std::vector<Mat> values;
      for (const auto& p : m.params().all()) values.push_back(p.value);
      if (first.empty()) first = values;
      for (size_t i = 0; i < values.size(); ++i) REQUIRE(same_bits(values[i], first[i]));
    }
  }
}
