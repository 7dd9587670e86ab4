// test_csv.cpp — write_csv: one line per row, %.17g values that read back bit-exact, atomic writes.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "gradflow/core/rng.hpp"
#include "gradflow/io/csv.hpp"
#include "temp_dir.hpp"

using namespace gradflow;
using Catch::Matchers::Contains;

TEST_CASE("csv: full precision round trip and layout", "[io][csv]") {
  test::TempDir dir;
  Mat m(2, 3);
  m << 0.1, 1.0 / 3.0, -1e-300, 2.0, -0.0, 123456789.125;
  write_csv(dir.file("m.csv"), m);
  const std::string text = test::read_bytes(dir.file("m.csv"));
  CHECK(text.substr(0, text.find('\n')) == "0.10000000000000001,0.33333333333333331,-1e-300");
  std::istringstream lines(text);
  std::string line;
  Index i = 0;
  while (std::getline(lines, line)) {
    REQUIRE(i < m.rows());
    std::istringstream cells(line);
    std::string cell;
    Index j = 0;
    while (std::getline(cells, cell, ',')) {
      REQUIRE(j < m.cols());
      const double v = std::strtod(cell.c_str(), nullptr);
      CHECK(std::memcmp(&v, &m(i, j), 8) == 0);
      ++j;
    }
    CHECK(j == m.cols());
    ++i;
  }
  CHECK(i == m.rows());
  CHECK(text.back() == '\n');
}

TEST_CASE("csv: write failure names the path", "[io][csv]") {
  test::TempDir dir;
  const std::string p = dir.file("missing/m.csv");
  CHECK_THAT(test::error_of([&] { write_csv(p, Mat::Ones(1, 1)); }),
             Contains("cannot write '" + p + "'") && Contains("fix: choose a writable path"));
}

TEST_CASE("csv: every value is written as printf's %.17g would write it", "[io][csv]") {
  // write_csv formats with std::to_chars (general, precision 17); the files must stay those of snprintf "%.17g"
  std::vector<double> v = {0.0, -0.0, 1.0, -1.0, 0.1, 1.0 / 3.0, 1e-300, -2.2250738585072014e-308, 4.9406564584124654e-324,
                           1.7976931348623157e308, 123456789.125, 1e16, 1e17, 9.999999999999999e16, 1e-5, 1e-4,
                           0.00012345678901234567, 100000000000000000000.0};
  Rng rng(3, "csv-values");
  for (int k = 0; k < 2000; ++k) v.push_back(rng.normal() * std::pow(10.0, rng.uniform(-30.0, 30.0)));
  Mat m(1, static_cast<Index>(v.size()));
  for (Index j = 0; j < m.cols(); ++j) m(0, j) = v[static_cast<size_t>(j)];
  test::TempDir dir;
  write_csv(dir.file("v.csv"), m);
  std::string expected;
  char buf[32];
  for (Index j = 0; j < m.cols(); ++j) {
    std::snprintf(buf, sizeof buf, "%.17g", m(0, j));
    expected += (j > 0 ? "," : "") + std::string(buf);
  }
  CHECK(test::read_bytes(dir.file("v.csv")) == expected + "\n");
}
