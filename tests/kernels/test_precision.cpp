// test_precision.cpp — the rounding of a double to float32, bfloat16 and float16 (kernels/precision.hpp): round to
// nearest, ties to even, subnormals, underflow to zero and overflow to Inf, on values whose answer is known exactly.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "gradflow/core/error.hpp"
#include "gradflow/kernels/precision.hpp"

using namespace gradflow;

namespace {
double p2(int e) { return std::ldexp(1.0, e); }
const double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST_CASE("precision: float16 rounding at its limits", "[precision]") {
  const Precision h = Precision::F16;
  const PrecisionLimits lim = limits(h);
  CHECK(lim.max_finite == 65504.0);
  CHECK(lim.min_normal == p2(-14));
  CHECK(lim.min_subnormal == p2(-24));
  CHECK(round_to(h, 65504.0) == 65504.0);
  CHECK(round_to(h, 65519.0) == 65504.0);   // below the midpoint to 65536
  CHECK(round_to(h, 65520.0) == kInf);      // the midpoint ties to even: 65536, which is past the range
  CHECK(round_to(h, -1e6) == -kInf);
  CHECK(round_to(h, p2(-24)) == p2(-24));   // the smallest subnormal
  CHECK(round_to(h, p2(-25)) == 0.0);       // half of it ties to even: zero
  CHECK(std::signbit(round_to(h, -p2(-25))));  // −0
  CHECK(round_to(h, 1.5 * p2(-25)) == p2(-24));
  CHECK(round_to(h, 3 * p2(-24)) == 3 * p2(-24));  // subnormals are multiples of 2^-24
  CHECK(round_to(h, 1 + p2(-11)) == 1.0);   // 11 significand bits: the tie goes to the even 1
  CHECK(round_to(h, 1 + 3 * p2(-11)) == 1 + p2(-9));
  CHECK(round_to(h, 1 + p2(-10)) == 1 + p2(-10));
}

TEST_CASE("precision: bfloat16 has float32's range and 8 significand bits", "[precision]") {
  const Precision b = Precision::BF16;
  const PrecisionLimits lim = limits(b);
  CHECK(round_to(b, lim.max_finite) == lim.max_finite);
  CHECK(lim.max_finite == 255 * p2(120));
  CHECK(round_to(b, 1 + p2(-8)) == 1.0);  // tie to even
  CHECK(round_to(b, 1 + 3 * p2(-8)) == 1 + p2(-6));
  CHECK(round_to(b, 1 + p2(-7)) == 1 + p2(-7));
  CHECK(round_to(b, p2(-133)) == p2(-133));  // its smallest subnormal
  CHECK(round_to(b, p2(-134)) == 0.0);
  CHECK(round_to(b, p2(-126)) == lim.min_normal);
  CHECK(round_to(b, 1e39) == kInf);  // past float32's range
  CHECK(std::isfinite(round_to(b, 3e38)));  // just below it
}

TEST_CASE("precision: float32 and float64", "[precision]") {
  CHECK(round_to(Precision::F32, 1 + p2(-24)) == 1.0);
  CHECK(round_to(Precision::F32, 1 + p2(-23)) == 1 + p2(-23));
  CHECK(round_to(Precision::F32, p2(-149)) == p2(-149));
  CHECK(round_to(Precision::F32, p2(-150)) == 0.0);
  CHECK(round_to(Precision::F64, 1 + p2(-52)) == 1 + p2(-52));
  for (const Precision p : {Precision::F64, Precision::F32, Precision::BF16, Precision::F16}) {
    const PrecisionLimits lim = limits(p);
    CHECK(representable(p, lim.max_finite));
    CHECK(representable(p, lim.min_normal));
    CHECK(representable(p, lim.min_subnormal));
    CHECK(round_to(p, lim.min_subnormal / 2) == 0.0);
    CHECK(representable(p, std::nan("")));
    double v[3] = {1.0 / 3.0, -2.0 / 3.0, 0.1};
    round_in_place(p, v, 3);
    for (double x : v) CHECK(representable(p, x));
  }
  CHECK_FALSE(representable(Precision::F16, 0.1));
}

TEST_CASE("precision: names and loss scales parse, anything else is refused with the fix", "[precision]") {
  CHECK(parse_precision("bf16") == Precision::BF16);
  CHECK(std::string(to_string(parse_precision("f16"))) == "f16");
  CHECK_THROWS_WITH(parse_precision("fp16"), Catch::Contains("fix: use f64"));
  CHECK(parse_loss_scale("dynamic").dynamic);
  CHECK(parse_loss_scale("1024").value == 1024.0);
  for (const char* bad : {"0", "-2", "inf", "nan", "2x", ""})
    CHECK_THROWS_WITH(parse_loss_scale(bad), Catch::Contains("fix: give a positive number"));
}

TEST_CASE("precision: the bfloat16 rounding written out equals Eigen::bfloat16's on every kind of float",
          "[precision]") {
  uint64_t state = 12345;
  for (int i = 0; i < 200000; ++i) {  // random bit patterns: normals, subnormals, Inf, NaN, ties
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const uint32_t bits = static_cast<uint32_t>(state >> 32) & (i % 3 == 0 ? 0xffff8000u : 0xffffffffu) |
                          (i % 3 == 0 ? 0x8000u : 0u);  // every third one a tie
    float f;
    std::memcpy(&f, &bits, sizeof f);
    const float want = static_cast<float>(Eigen::bfloat16(f)), got = round_float_to_bf16(f);
    if (std::isnan(want)) {
      CHECK(std::isnan(got));
    } else if (!(got == want && std::signbit(got) == std::signbit(want))) {
      FAIL("bits " << bits << ": " << got << " vs Eigen's " << want);
    }
  }
}
