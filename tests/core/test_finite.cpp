// test_finite.cpp — all_finite (core/finite.hpp) agrees with Eigen's allFinite(): every position of a NaN, +Inf or
// −Inf is found (also in the tail a vector loop leaves over), and the largest finite values, subnormals and −0 pass.
#include <catch2/catch.hpp>

#include <limits>

#include "gradflow/core/finite.hpp"

using namespace gradflow;

TEST_CASE("all_finite finds every NaN and Inf, and only those", "[core][quick]") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (const Index rows : {1, 3, 7})
    for (const Index cols : {1, 5, 13}) {
      Mat m(rows, cols);
      for (Index i = 0; i < m.size(); ++i)  // finite extremes: the largest, subnormal, −0
        m.data()[i] = i % 4 == 0 ? std::numeric_limits<double>::max() : i % 4 == 1 ? -std::numeric_limits<double>::denorm_min()
                                                                       : i % 4 == 2 ? -0.0 : -1e300;
      REQUIRE(all_finite(m));
      REQUIRE(all_finite(m.data(), m.size()));
      for (Index k = 0; k < m.size(); ++k)
        for (const double bad : {nan, inf, -inf}) {
          Mat b = m;
          b.data()[k] = bad;
          INFO(rows << "x" << cols << " entry " << k << " = " << bad);
          REQUIRE_FALSE(all_finite(b));
          REQUIRE(all_finite(b) == b.allFinite());
        }
    }
}

TEST_CASE("all_finite on blocks and maps: strided views fall back to Eigen's test", "[core][quick]") {
  Mat m = Mat::Ones(6, 8);
  m(4, 7) = std::numeric_limits<double>::infinity();
  REQUIRE_FALSE(all_finite(m));
  REQUIRE(all_finite(m.topRows(4)));        // contiguous rows of a row-major matrix
  REQUIRE(all_finite(m.leftCols(7)));       // strided: Eigen's allFinite
  REQUIRE_FALSE(all_finite(m.rightCols(1)));
  REQUIRE_FALSE(all_finite(Eigen::Map<const Mat>(m.data(), 8, 6)));
  REQUIRE(all_finite(Mat()));               // empty: nothing to fail
}
