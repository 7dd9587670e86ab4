// rng.cpp — SplitMix64 streams, 53-bit uniforms, Box-Muller normals (see rng.hpp).
#include "gradflow/core/rng.hpp"

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

void Rng::fill_uniform(MatRef m, double lo, double hi) {
  for (Index i = 0; i < m.rows(); ++i)
    for (Index j = 0; j < m.cols(); ++j) m(i, j) = uniform(lo, hi);
}

void Rng::fill_normal(MatRef m, double stddev) {
  for (Index i = 0; i < m.rows(); ++i)
    for (Index j = 0; j < m.cols(); ++j) m(i, j) = stddev * normal();
}

}  // namespace gradflow
