// test_csv.cpp — write_csv: one line per row, %.17g values that read back bit-exact, atomic writes.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <sstream>

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
