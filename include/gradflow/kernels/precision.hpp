// precision.hpp — the floating-point types a run can emulate (--precision f64|f32|bf16|f16) and the rounding of a
// double to each: round to nearest, ties to even, through float32 first (as PyTorch's casts from float64 and every
// op that computes in float32 and stores the result in the narrower type: c10::BFloat16 and c10::Half are built
// from a float), so a value below the type's smallest subnormal becomes ±0 and one above its largest finite value
// ±Inf. docs/math.md §16 has the per-op table of what a run at each precision rounds where.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include <Eigen/Core>

#include "gradflow/core/types.hpp"

namespace gradflow {

enum class Precision { F64, F32, BF16, F16 };

// "f64" | "f32" | "bf16" | "f16"; Error naming the choices for anything else (option names the flag).
Precision parse_precision(const std::string& text, const std::string& option = "--precision");
const char* to_string(Precision p);

// What the type can hold: its largest finite value, smallest positive normal and subnormal, and its significand
// bits (the implicit one included).
struct PrecisionLimits {
  double max_finite, min_normal, min_subnormal;
  int significand_bits;
};
PrecisionLimits limits(Precision p);

// A float rounded to bfloat16 (the upper 16 bits, to nearest, ties to even; NaN kept), as a float: Eigen::bfloat16's
// rounding written out so that loops over it vectorize.
inline float round_float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return f;  // NaN
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// x rounded to the type (returned as a double, which holds every value of every type exactly). F64: x itself.
inline double round_to(Precision p, double x) {
  switch (p) {
    case Precision::F64: return x;
    case Precision::F32: return static_cast<double>(static_cast<float>(x));
    case Precision::BF16: return static_cast<double>(round_float_to_bf16(static_cast<float>(x)));
    case Precision::F16: return static_cast<double>(static_cast<float>(Eigen::half(static_cast<float>(x))));
  }
  return x;
}

// The type a low-precision model stores what is not a matrix product's (its parameters and their .grad, its input
// and output, the loss's cotangent, the residual stream): p for the model cast to p, float32 under autocast.
inline Precision stored_type(Precision p, bool autocast) { return autocast ? Precision::F32 : p; }

// Every value of x[0 .. count) rounded in place.
void round_in_place(Precision p, double* x, Index count);
inline void round_in_place(Precision p, Mat& m) { round_in_place(p, m.data(), m.size()); }

// Whether x is a value of the type (NaN and ±Inf are).
inline bool representable(Precision p, double x) { return std::isnan(x) || round_to(p, x) == x; }

// --loss-scale S | dynamic: the factor the output cotangent is multiplied by before the low-precision backward pass
// (and the gradients divided by after it, exactly, in float64). dynamic: the largest power of two with no Inf/NaN in
// the backward pass (analyze) or PyTorch's GradScaler (train).
struct LossScale {
  bool dynamic = false;
  double value = 1.0;  // the fixed S (dynamic: the one found)
};
// "dynamic" or a positive finite number; Error naming the fix otherwise.
LossScale parse_loss_scale(const std::string& text, const std::string& option = "--loss-scale");

}  // namespace gradflow
