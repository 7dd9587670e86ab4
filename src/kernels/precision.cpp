// precision.cpp — see precision.hpp.
#include "gradflow/kernels/precision.hpp"

#include <cstdlib>

#include "gradflow/core/decimal.hpp"
#include "gradflow/core/error.hpp"

namespace gradflow {

Precision parse_precision(const std::string& text, const std::string& option) {
  if (text == "f64") return Precision::F64;
  if (text == "f32") return Precision::F32;
  if (text == "bf16") return Precision::BF16;
  if (text == "f16") return Precision::F16;
  throw Error(option + " '" + text + "' is not a precision; fix: use f64 (exact, the default), f32, bf16 or f16");
}

const char* to_string(Precision p) {
  switch (p) {
    case Precision::F64: return "f64";
    case Precision::F32: return "f32";
    case Precision::BF16: return "bf16";
    case Precision::F16: return "f16";
  }
  return "?";
}

PrecisionLimits limits(Precision p) {
  switch (p) {
    case Precision::F64:
      return {std::numeric_limits<double>::max(), std::numeric_limits<double>::min(),
              std::numeric_limits<double>::denorm_min(), 53};
    case Precision::F32:
      return {std::numeric_limits<float>::max(), std::numeric_limits<float>::min(),
              std::numeric_limits<float>::denorm_min(), 24};
    case Precision::BF16:  // float32's exponent range, 8 significand bits
      return {std::ldexp(255.0, 120), std::ldexp(1.0, -126), std::ldexp(1.0, -133), 8};
    case Precision::F16:
      return {65504.0, std::ldexp(1.0, -14), std::ldexp(1.0, -24), 11};
  }
  return {0, 0, 0, 0};
}

void round_in_place(Precision p, double* x, Index count) {
  switch (p) {
    case Precision::F64: return;
    case Precision::F32:
      for (Index i = 0; i < count; ++i) x[i] = static_cast<double>(static_cast<float>(x[i]));
      return;
    case Precision::BF16:
      for (Index i = 0; i < count; ++i) x[i] = round_to(Precision::BF16, x[i]);
      return;
    case Precision::F16:
      for (Index i = 0; i < count; ++i) x[i] = round_to(Precision::F16, x[i]);
      return;
  }
}

LossScale parse_loss_scale(const std::string& text, const std::string& option) {
  LossScale s;
  if (text == "dynamic") {
    s.dynamic = true;
    return s;
  }
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  require(is_decimal_number(text) || text.empty(), option + " " + not_decimal(text) + "; fix: give a positive number (e.g. 1024) or 'dynamic'");
  require(!text.empty() && end && *end == '\0' && std::isfinite(v) && v > 0,
          option + " '" + text + "' is not a loss scale; fix: give a positive number (e.g. 1024) or 'dynamic'");
  s.value = v;
  return s;
}

}  // namespace gradflow
