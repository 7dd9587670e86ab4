// test_contour.cpp — the contour lines of the phase-diagram figure (src/plot/contour.hpp): on a linear field every
// piece lies on the exact level line, a saddle is split by its centre value, missing cells are skipped; round levels.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "plot/contour.hpp"
#include "tolerances.hpp"

using namespace gradflow;

namespace {
// v(x, y) on the grid x = 0, 1, 2, 3 (nx = 4), y = 0, 0.5, 1 (ny = 3), as contour_segments takes it.
template <class F>
std::vector<double> sample(const std::vector<double>& x, const std::vector<double>& y, F f) {
  std::vector<double> v;
  for (double a : x)
    for (double b : y) v.push_back(f(a, b));
  return v;
}
}  // namespace

TEST_CASE("contour of a linear field: every piece on the exact level line, one per crossed square", "[quick]") {
  const std::vector<double> x = {0, 1, 2, 3}, y = {0, 0.5, 1};
  const auto f = [](double a, double b) { return a + 2 * b; };
  const std::vector<double> v = sample(x, y, f);
  for (double level : {0.3, 1.5, 2.75, 4.2}) {
    INFO("level " << level);
    const auto segs = contour_segments(x, y, v, level);
    REQUIRE_FALSE(segs.empty());
    for (const auto& s : segs) {  // linear interpolation is exact on a linear field
      REQUIRE(std::abs(f(s.x0, s.y0) - level) < test::kAlgebraTol * 10);
      REQUIRE(std::abs(f(s.x1, s.y1) - level) < test::kAlgebraTol * 10);
      REQUIRE((s.x0 != s.x1 || s.y0 != s.y1));
    }
  }
  REQUIRE(contour_segments(x, y, v, -1).empty());  // outside the range: nothing
  REQUIRE(contour_segments(x, y, v, 10).empty());
  // level 1.5 crosses x + 2y = 1.5 through squares (0,0)-(1,0.5), (0,0.5)-(1,1) and (1,0)-(2,0.5): three pieces
  REQUIRE(contour_segments(x, y, v, 1.5).size() == 3);
}

TEST_CASE("contour: a saddle square is split by its centre, a missing corner leaves its squares out", "[quick]") {
  const std::vector<double> x = {0, 1}, y = {0, 1};
  // corners a (0,0) = 1, b (1,0) = 0, c (1,1) = 1, d (0,1) = 0 (v[i * ny + j]): a and c inside at level 0.5
  std::vector<double> v = {1, 0, 0, 1};
  auto segs = contour_segments(x, y, v, 0.5);  // centre 0.5 >= 0.5: inside, so b and d are cut off
  REQUIRE(segs.size() == 2);
  // the piece cuts off corner (cx, cy): one end on the corner's horizontal edge, the other on its vertical edge
  const auto touches = [](const Segment& s, double cx, double cy) {
    const auto h = [&](double px, double py) { return py == cy && px != cx; };
    const auto v = [&](double px, double py) { return px == cx && py != cy; };
    return (h(s.x0, s.y0) && v(s.x1, s.y1)) || (v(s.x0, s.y0) && h(s.x1, s.y1));
  };
  REQUIRE(touches(segs[0], 1, 0));  // b
  REQUIRE(touches(segs[1], 0, 1));  // d
  segs = contour_segments(x, y, v, 0.6);  // centre 0.5 < 0.6: outside, so a and c are cut off
  REQUIRE(segs.size() == 2);
  REQUIRE(touches(segs[0], 0, 0));
  REQUIRE(touches(segs[1], 1, 1));
  v[0] = std::numeric_limits<double>::quiet_NaN();
  REQUIRE(contour_segments(x, y, v, 0.5).empty());
}

TEST_CASE("nice levels: round values strictly inside the range, decades on a log scale", "[quick]") {
  REQUIRE(nice_levels(0, 1, false) == std::vector<double>{0.2, 0.4, 0.6, 0.8});
  REQUIRE(nice_levels(0.013, 0.987, false) == std::vector<double>{0.2, 0.4, 0.6, 0.8});
  REQUIRE(nice_levels(-3, 3, false) == std::vector<double>{-2, 0, 2});  // about 5: steps of 2
  REQUIRE(nice_levels(0.01, 50, true) == std::vector<double>{0.1, 1, 10});
  REQUIRE(nice_levels(0.5, 8, true) == std::vector<double>{1, 2, 5});  // one decade inside: 1-2-5
  REQUIRE(nice_levels(1e-9, 1e3, true).size() <= 6);                   // many decades: every other one
  REQUIRE(nice_levels(1, 1, false).empty());
}
