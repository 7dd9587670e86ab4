// test_number_text.cpp — number_text is printf's %g with the given significant digits: the spelling of the
// train-sweep file names (6 digits) and of the values a NaN/Inf fix quotes (3 digits) must not change.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "gradflow/report/number_text.hpp"

using namespace gradflow;

TEST_CASE("number_text writes %g with six significant digits by default", "[number_text]") {
  CHECK(number_text(0.001) == "0.001");
  CHECK(number_text(3e-4) == "0.0003");
  CHECK(number_text(1e-5) == "1e-05");
  CHECK(number_text(1.0) == "1");
  CHECK(number_text(100) == "100");
  CHECK(number_text(1234567.0) == "1.23457e+06");
  CHECK(number_text(0.1 + 0.2) == "0.3");
  CHECK(number_text(-2.5) == "-2.5");
  CHECK(number_text(0.0) == "0");
}

TEST_CASE("number_text with three digits rounds to three significant digits", "[number_text]") {
  CHECK(number_text(1.3407807929942596e154, 3) == "1.34e+154");
  CHECK(number_text(0.70710678, 3) == "0.707");
  CHECK(number_text(1e200, 3) == "1e+200");
  CHECK(number_text(12345.0, 3) == "1.23e+04");
}

TEST_CASE("number_text writes non-finite values as printf does", "[number_text]") {
  CHECK(number_text(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(number_text(-std::numeric_limits<double>::infinity(), 3) == "-inf");
  CHECK(number_text(std::nan("")) == "nan");
}

TEST_CASE("number_text with 17 digits gives back the double", "[number_text]") {
  const double v = 0.1 + 0.2;
  CHECK(std::stod(number_text(v, 17)) == v);
  CHECK(number_text(v, 17) == "0.30000000000000004");
}
