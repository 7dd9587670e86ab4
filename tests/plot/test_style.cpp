// test_style.cpp — quoting, readable log-axis tics and legend placement.
#include <catch2/catch.hpp>

#include <regex>
#include <set>
#include <sstream>

#include "gradflow/plot/series.hpp"
#include "gradflow/plot/style.hpp"

using namespace gradflow;

TEST_CASE("gnuplot strings and numbers round-trip") {
  REQUIRE(gp_quote("it's") == "'it''s'");
  REQUIRE(gp_quote("a\nb") == "'a b'");
  REQUIRE(gp_num(0.1) == "0.10000000000000001");
  REQUIRE(gp_num(NAN) == "NaN");
}

TEST_CASE("log axes: decade tics over many decades, explicit tics over a narrow range") {
  REQUIRE(spans_decades(0.01, 1));
  REQUIRE_FALSE(spans_decades(0.5, 2));
  const std::string wide = log_axis("y", 1e-6, 10);
  REQUIRE(wide.find("set logscale y") == 0);
  REQUIRE(wide.find("set format y '10^{%L}'") != std::string::npos);
  const std::string narrow = log_axis("y", 0.3, 4);
  REQUIRE(narrow.find("set ytics ('0.5' 0.5, '1' 1, '2' 2)") != std::string::npos);
  const std::string flat = log_axis("y", 28, 31);  // under a factor 1.2: linear nice tics
  REQUIRE(flat.find("set ytics (") != std::string::npos);
  REQUIRE(flat.find("'30' 30") != std::string::npos);
}

namespace {
Series line(std::vector<double> x, std::vector<double> y) {
  Series s;
  s.x = std::move(x);
  s.y = std::move(y);
  return s;
}
}  // namespace

TEST_CASE("the legend goes where the data are not") {
  REQUIRE(emptiest_corner({line({0, 1, 2, 3}, {1, 2, 3, 4})}, false, false) == "top left");
  REQUIRE(emptiest_corner({line({0, 1, 2, 3}, {4, 3, 2, 1})}, false, false) == "top right");
  // every corner holds data: below the axes (issue 18: above the plot it sat on the panel above in multiplots)
  REQUIRE(emptiest_corner({line({0, 1, 2, 3}, {4, 4, 4, 4}), line({0, 1, 2, 3}, {1, 1, 1, 1})}, false, false) == "below");
  // on a log axis 1, 10, 100, 1000 is a straight rising line
  REQUIRE(emptiest_corner({line({0, 1, 2, 3}, {1, 10, 100, 1000})}, false, true) == "top left");
}

TEST_CASE("the palette: eight colours, eight markers, eight dash patterns (issue 38: no series 5-8 repeating 1-4's "
          "dashes)") {
  std::set<std::string> colours, points, dashes;
  std::istringstream lines(palette_commands());
  int entries = 0;
  for (std::string line; std::getline(lines, line);) {
    const std::regex entry("set linetype \\d+ lc rgb '(#[0-9A-F]{6})' lw [\\d.]+ pt (\\d+) ps [\\d.]+ dt (\\S+)");
    std::smatch m;
    if (!std::regex_match(line, m, entry)) continue;
    ++entries;
    colours.insert(m[1]), points.insert(m[2]), dashes.insert(m[3]);
  }
  REQUIRE(entries == kStyles);
  REQUIRE(colours.size() == kStyles);
  REQUIRE(points.size() == kStyles);
  REQUIRE(dashes.size() == kStyles);
  REQUIRE(std::string(kNeutralColour).find("lc rgb '#") == 0);
  REQUIRE(colours.count(std::string(kNeutralColour).substr(8, 7)) == 0);  // the neutral grey is no series' colour
}
