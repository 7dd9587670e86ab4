// rng.hpp — deterministic, platform-independent random numbers.
// Each consumer (a parameter, the input, the cotangent) draws from its own stream, derived from the
// user's seed and the consumer's name by SplitMix64, so adding a parameter never shifts another's values.
// Uniforms take 53 random bits; normals use the Box-Muller transform written here (std::normal_distribution
// is implementation-defined and would make reports differ between standard libraries).
#pragma once
#include <cstdint>
#include <string_view>

#include "gradflow/core/types.hpp"

namespace gradflow {

class Rng {
 public:
  Rng(uint64_t seed, std::string_view stream);
  uint64_t next_u64();
  double uniform();                       // [0, 1)
  double uniform(double lo, double hi);   // [lo, hi)
  double normal();                        // N(0, 1)
  // Skips `draws` raw draws (next_u64 calls) in O(1): the stream continues where that many calls would leave it. A
  // normal() spare pending is dropped (so skip only between whole draws of next_u64/uniform).
  void discard(uint64_t draws);
  // m(i, j) = the (i·cols + j)-th draw, exactly as the loop of uniform() / normal() calls in row-major order would
  // give it (and the stream left where that loop leaves it); ranges of elements are filled in parallel.
  void fill_uniform(MatRef m, double lo, double hi);
  void fill_normal(MatRef m, double stddev);
  // The elements per parallel range of the fills (default 32768); tests make it small to split small matrices.
  static void set_fill_grain(Index elements);

 private:
  uint64_t state_;
  bool has_spare_ = false;
  double spare_ = 0.0;
};

}  // namespace gradflow
