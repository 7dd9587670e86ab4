// contour.cpp — see contour.hpp. Marching squares: each grid square's four edges are cut where the field crosses
// the level (linear interpolation between the two corners), and the cuts are joined within the square.
#include "contour.hpp"

#include <cmath>

namespace gradflow {
namespace {

struct Point {
  double x, y;
};

// Where the level crosses the edge from (xa, ya, va) to (xb, yb, vb): linear interpolation.
Point cut(double xa, double ya, double va, double xb, double yb, double vb, double level) {
  const double t = (level - va) / (vb - va);
  return {xa + t * (xb - xa), ya + t * (yb - ya)};
}

}  // namespace

std::vector<Segment> contour_segments(const std::vector<double>& x, const std::vector<double>& y,
                                      const std::vector<double>& v, double level) {
  std::vector<Segment> out;
  const size_t nx = x.size(), ny = y.size();
  if (nx < 2 || ny < 2 || v.size() != nx * ny) return out;
  const auto at = [&](size_t i, size_t j) { return v[i * ny + j]; };
  for (size_t i = 0; i + 1 < nx; ++i)
    for (size_t j = 0; j + 1 < ny; ++j) {
      // corners counter-clockwise: a (i, j), b (i+1, j), c (i+1, j+1), d (i, j+1)
      const double va = at(i, j), vb = at(i + 1, j), vc = at(i + 1, j + 1), vd = at(i, j + 1);
      if (!std::isfinite(va) || !std::isfinite(vb) || !std::isfinite(vc) || !std::isfinite(vd)) continue;
      const bool ia = va >= level, ib = vb >= level, ic = vc >= level, id = vd >= level;
      // edges: 0 bottom a-b, 1 right b-c, 2 top c-d, 3 left d-a; the cut on each edge that is crossed
      bool crossed[4] = {ia != ib, ib != ic, ic != id, id != ia};
      Point p[4] = {};
      if (crossed[0]) p[0] = cut(x[i], y[j], va, x[i + 1], y[j], vb, level);
      if (crossed[1]) p[1] = cut(x[i + 1], y[j], vb, x[i + 1], y[j + 1], vc, level);
      if (crossed[2]) p[2] = cut(x[i + 1], y[j + 1], vc, x[i], y[j + 1], vd, level);
      if (crossed[3]) p[3] = cut(x[i], y[j + 1], vd, x[i], y[j], va, level);
      const int n = crossed[0] + crossed[1] + crossed[2] + crossed[3];
      const auto seg = [&](int e, int f) { out.push_back({p[e].x, p[e].y, p[f].x, p[f].y}); };
      if (n == 2) {
        int e = -1, f = -1;
        for (int k = 0; k < 4; ++k)
          if (crossed[k]) (e < 0 ? e : f) = k;
        seg(e, f);
      } else if (n == 4) {  // a saddle: a and c on one side, b and d on the other
        const bool centre = (va + vb + vc + vd) / 4 >= level;
        // the corners on the other side than the centre are cut off, each by the two edges that meet at it
        if (ia != centre) {
          seg(3, 0);  // a: left and bottom
          seg(1, 2);  // c: right and top
        } else {
          seg(0, 1);  // b: bottom and right
          seg(2, 3);  // d: top and left
        }
      }
    }
  return out;
}

std::vector<double> nice_levels(double lo, double hi, bool decades, int target) {
  std::vector<double> out;
  if (!(lo < hi) || !std::isfinite(lo) || !std::isfinite(hi)) return out;
  const auto inside = [&](double v) { return v > lo * (1 + 1e-12) && v < hi * (1 - 1e-12); };
  if (decades && lo > 0) {
    for (const auto& mantissas : std::vector<std::vector<double>>{{1}, {1, 2, 5}}) {
      out.clear();
      for (int k = static_cast<int>(std::floor(std::log10(lo))); k <= static_cast<int>(std::ceil(std::log10(hi))); ++k)
        for (double m : mantissas) {
          const double v = m * std::pow(10.0, k);
          if (inside(v)) out.push_back(v);
        }
      if (out.size() >= 2) break;
    }
    while (static_cast<int>(out.size()) > target + 1) {  // too many: every other one
      std::vector<double> half;
      for (size_t k = 0; k < out.size(); k += 2) half.push_back(out[k]);
      out = half;
    }
    return out;
  }
  const double raw = (hi - lo) / target;
  const int e = static_cast<int>(std::floor(std::log10(raw)));
  const double p = std::pow(10.0, e);
  double m = 10;
  for (double c : {1.0, 2.0, 2.5, 5.0})
    if (c * p >= raw) {
      m = c;
      break;
    }
  // level k is k·m·10^e, written k·m / 10^-e for e < 0 so that it is the double nearest the decimal (0.6, not
  // 0.6000000000000001)
  const auto level = [&](double k) { return e < 0 ? k * m / std::pow(10.0, -e) : k * m * p; };
  for (double k = std::ceil(lo / (m * p)) - 1; level(k) < hi; ++k)
    if (level(k) > lo) out.push_back(level(k) == 0 ? 0.0 : level(k));
  return out;
}

}  // namespace gradflow
