// rng.cpp — SplitMix64 streams, 53-bit uniforms, Box-Muller normals (see rng.hpp).
#include "gradflow/core/rng.hpp"

#include <algorithm>
#include <cmath>

namespace gradflow {
namespace {
uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) { h ^= c; h *= 0x100000001b3ull; }
  return h;
}
}  // namespace

Rng::Rng(uint64_t seed, std::string_view stream) {
  uint64_t x = seed ^ fnv1a(stream);
  state_ = splitmix64(x);
}

uint64_t Rng::next_u64() { return splitmix64(state_); }

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double Rng::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

double Rng::normal() {
  if (has_spare_) { has_spare_ = false; return spare_; }
  double u1 = 0.0;
  while (u1 <= 0.0) u1 = uniform();
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double t = 2.0 * M_PI * u2;
  spare_ = r * std::sin(t);
  has_spare_ = true;
  return r * std::cos(t);
}

// Parallel fills. SplitMix64 is counter-based: the state after k draws is s0 + k·γ, so a range of elements can
// start from its own copy of the state and compute exactly the values the one-by-one loop gives them. Ranges are
// fixed-size (kFillGrain elements, not a share per thread): the split, and so every value, does not depend on the
// thread count either way.
namespace {
constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;
Index fill_grain = Index(1) << 15;
}  // namespace

void Rng::discard(uint64_t draws) {
  state_ += draws * kGamma;  // SplitMix64's state after k more draws (mod 2^64)
  has_spare_ = false;
}

void Rng::set_fill_grain(Index elements) { fill_grain = elements < 1 ? 1 : elements; }

void Rng::fill_uniform(MatRef m, double lo, double hi) {
  const Index rows = m.rows(), cols = m.cols(), total = rows * cols;
  if (total == 0) return;
  const uint64_t s0 = state_;
  const Index chunks = (total + fill_grain - 1) / fill_grain;
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (Index c = 0; c < chunks; ++c) {
    const Index k0 = c * fill_grain, k1 = std::min(total, k0 + fill_grain);
    uint64_t x = s0 + static_cast<uint64_t>(k0) * kGamma;  // the state after k0 draws
    Index i = k0 / cols, j = k0 % cols;
    for (Index k = k0; k < k1; ++k) {
      const double u = static_cast<double>(splitmix64(x) >> 11) * 0x1.0p-53;  // uniform()
      m(i, j) = lo + (hi - lo) * u;                                           // uniform(lo, hi)
      if (++j == cols) {
        j = 0;
        ++i;
      }
    }
  }
  state_ = s0 + static_cast<uint64_t>(total) * kGamma;
}

void Rng::fill_normal(MatRef m, double stddev) {
  const Index rows = m.rows(), cols = m.cols(), total = rows * cols;
  if (total == 0) return;
  const auto at = [&](Index k) -> double& { return m(k / cols, k % cols); };
  // Element 0 takes a waiting spare; the others come in Box-Muller pairs (cos, then sin), pair q from uniforms
  // 2q and 2q + 1, unless some u1 is exactly 0 (probability 2^-53 per pair): the loop below redraws it, which
  // shifts every later pair, so a range that meets one reports it and the whole fill is redone one by one.
  const Rng start = *this;
  Index first = 0;
  if (has_spare_) {
    at(0) = stddev * spare_;
    has_spare_ = false;
    first = 1;
  }
  const Index rest = total - first, pairs = (rest + 1) / 2;
  const uint64_t s0 = state_;
  const Index grain_pairs = std::max<Index>(1, fill_grain / 2), chunks = (pairs + grain_pairs - 1) / grain_pairs;
  bool retry = false;
  double last_sin = 0.0;
#pragma omp parallel for schedule(static) if (chunks > 1) reduction(|| : retry)
  for (Index c = 0; c < chunks; ++c) {
    const Index q0 = c * grain_pairs, q1 = std::min(pairs, q0 + grain_pairs);
    uint64_t x = s0 + static_cast<uint64_t>(2 * q0) * kGamma;  // the state after 2·q0 draws
    for (Index q = q0; q < q1; ++q) {
      const double u1 = static_cast<double>(splitmix64(x) >> 11) * 0x1.0p-53;
      if (u1 <= 0.0) {
        retry = true;
        break;
      }
      const double u2 = static_cast<double>(splitmix64(x) >> 11) * 0x1.0p-53;
      const double r = std::sqrt(-2.0 * std::log(u1));  // as normal()
      const double t = 2.0 * M_PI * u2;
      const double sn = r * std::sin(t);
      const Index k = first + 2 * q;
      at(k) = stddev * (r * std::cos(t));
      if (k + 1 < total) at(k + 1) = stddev * sn;
      else last_sin = sn;  // only the last pair of an odd count: written by one thread
    }
  }
  if (retry) {  // the exact sequence of the one-by-one loop
    *this = start;
    for (Index k = 0; k < total; ++k) at(k) = stddev * normal();
    return;
  }
  state_ = s0 + static_cast<uint64_t>(2 * pairs) * kGamma;
  if (rest % 2 == 1) {  // the last pair's sin waits for the next normal()
    has_spare_ = true;
    spare_ = last_sin;
  }
}

}  // namespace gradflow
