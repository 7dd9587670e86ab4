// series.cpp — see series.hpp. Data file: one block per series, "x y [lo hi]" rows, blocks separated by two
// blank lines (gnuplot's `index`); on a log axis non-positive values are written as NaN (gnuplot skips them).
#include "gradflow/plot/series.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "gradflow/core/error.hpp"
#include "gradflow/plot/style.hpp"

namespace gradflow {
namespace {

struct Range {
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  double pos_lo = std::numeric_limits<double>::infinity();  // smallest positive value
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    if (v > 0) pos_lo = std::min(pos_lo, v);
  }
  bool empty() const { return lo > hi; }
};

bool decide_log(const std::string& mode, const Range& r) {
  if (mode == "on") return true;
  if (mode == "off") return false;
  return r.hi > 0 && spans_decades(r.pos_lo, r.hi);
}

}  // namespace

std::string emptiest_corner(const std::vector<Series>& series, bool logx, bool logy) {
  Range rx, ry;
  auto tx = [&](double v) { return logx ? (v > 0 ? std::log10(v) : NAN) : v; };
  auto ty = [&](double v) { return logy ? (v > 0 ? std::log10(v) : NAN) : v; };
  for (const auto& s : series)
    for (size_t i = 0; i < s.x.size(); ++i) rx.add(tx(s.x[i])), ry.add(ty(s.y[i]));
  if (rx.empty() || ry.empty()) return "top right";
  const char* names[4] = {"top left", "top right", "bottom left", "bottom right"};
  int count[4] = {0, 0, 0, 0};
  const double wx = std::max(rx.hi - rx.lo, 1e-300), wy = std::max(ry.hi - ry.lo, 1e-300);
  auto count_at = [&](double u, double v) {  // u, v: axis fractions; regions sized like a two-line legend
    if (!std::isfinite(u) || !std::isfinite(v)) return;
    if (v >= 0.7 && u <= 0.55) ++count[0];
    if (v >= 0.7 && u >= 0.45) ++count[1];
    if (v <= 0.3 && u <= 0.55) ++count[2];
    if (v <= 0.3 && u >= 0.45) ++count[3];
  };
  for (const auto& s : series)
    for (size_t i = 0; i < s.x.size(); ++i) {  // the points, and the lines between them (8 samples each)
      const double u = (tx(s.x[i]) - rx.lo) / wx, v = (ty(s.y[i]) - ry.lo) / wy;
      count_at(u, v);
      if (i + 1 == s.x.size()) continue;
      const double u1 = (tx(s.x[i + 1]) - rx.lo) / wx, v1 = (ty(s.y[i + 1]) - ry.lo) / wy;
      for (int k = 1; k < 8; ++k) count_at(u + (u1 - u) * k / 8.0, v + (v1 - v) * k / 8.0);
    }
  int best = 1;  // prefer top right on ties, then top left
  for (int k : {1, 0, 3, 2})
    if (count[k] < count[best]) best = k;
  if (count[best] > 0) return "outside top center horizontal font ',7'";  // every corner holds data: above the plot
  return names[best];
}

std::string round_xtics(const std::vector<Series>& series) {
  double hi = 0;
  for (const auto& s : series)
    for (double x : s.x) hi = std::max(hi, x);
  if (!(hi > 0)) return "";
  const double raw = hi / 4, mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / mag <= 1 ? mag : raw / mag <= 2 ? 2 * mag : raw / mag <= 5 ? 5 * mag : 10 * mag;
  char buf[64];
  std::snprintf(buf, sizeof buf, "set xtics %g\n", step);
  return buf;
}

Figure line_figure(const LineFigure& f, int first_block) {
  require(!f.series.empty(), "nothing to plot: no series found in the inputs; fix: check the report files");
  Range rx, ry;
  for (const auto& s : f.series) {
    for (double v : s.x) rx.add(v);
    for (double v : s.y) ry.add(v);
    for (double v : s.lo) ry.add(v);
    for (double v : s.hi) ry.add(v);
  }
  require(!ry.empty(), "nothing to plot: every value is missing or not finite; fix: check the report files");
  const bool logy = decide_log(f.logy, ry), logx = decide_log(f.logx, rx);
  if (logy) require(ry.hi > 0, "a log y axis needs positive values; fix: pass --logy off");

  Figure fig;
  fig.aspect = f.aspect;
  std::vector<int> block(f.series.size(), -1);  // data block of each series (legend-only series have none)
  int blocks = 0;
  for (size_t k = 0; k < f.series.size(); ++k) {
    const Series& s = f.series[k];
    if (s.key_only) continue;
    block[k] = first_block + blocks;
    fig.data += (blocks++ ? "\n\n" : "") + std::string("# ") + s.title + "\n# x y" + (s.lo.empty() ? "" : " lo hi") + "\n";
    for (size_t i = 0; i < s.x.size(); ++i) {
      auto val = [&](double v) { return gp_num(logy && !(v > 0) ? NAN : v); };
      fig.data += gp_num(s.x[i]) + " " + val(s.y[i]);
      if (!s.lo.empty()) fig.data += " " + val(s.lo[i]) + " " + val(s.hi[i]);
      fig.data += "\n";
    }
  }

  std::string& b = fig.body;
  b += "set xlabel " + gp_quote(f.xlabel) + "\nset ylabel " + gp_quote(f.ylabel) + (f.ylabel_plain ? " noenhanced" : "") + "\n";
  if (logy) b += log_axis("y", ry.pos_lo, ry.hi);
  else if (ry.lo >= 0 && ry.lo < 0.2 * ry.hi) b += "set yrange [0:*]\n";
  if (logx) b += log_axis("x", rx.pos_lo, rx.hi);
  if (!f.xtics.empty()) {
    b += "set xtics (";
    for (size_t i = 0; i < f.xtics.size(); ++i)
      b += (i ? ", " : "") + gp_quote(f.xtics[i].second) + " " + gp_num(f.xtics[i].first);
    b += ") noenhanced\n";
  }
  if (!logx && !rx.empty()) {
    const double pad = rx.hi > rx.lo ? 0.03 * (rx.hi - rx.lo) : 0.5;
    b += "set xrange [" + gp_num(rx.lo - pad) + ":" + gp_num(rx.hi + pad) + "]\n";
    if (f.integer_x && f.xtics.empty()) {
      const double span = rx.hi - rx.lo;
      const int step = span <= 8 ? 1 : span <= 16 ? 2 : span <= 40 ? 5 : span <= 80 ? 10 : 20;
      b += "set xtics " + std::to_string(step) + "\nset mxtics " + std::to_string(step > 1 ? step : 1) + "\n";
    }
  }
  b += "set key " + emptiest_corner(f.series, logx, logy) + "\n";
  b += f.extra;
  const std::string pi = f.point_interval > 1 ? " pointinterval " + std::to_string(f.point_interval) : "";
  b += "plot \\\n";
  std::vector<std::string> parts;
  auto lt_of = [&](const Series& s, size_t k) {
    return !s.style_spec.empty() ? s.style_spec
                                 : "lt " + std::to_string(s.style > 0 ? s.style : static_cast<int>(k % kStyles) + 1);
  };
  auto title_of = [](const Series& s) {
    return s.title.empty() ? std::string(" notitle") : " title " + gp_quote(s.title) + (s.enhanced ? "" : " noenhanced");
  };
  for (size_t k = 0; k < f.series.size(); ++k) {  // bands first, under every line
    const Series& s = f.series[k];
    const std::string idx = "data index " + std::to_string(block[k]);
    if (!s.key_only && !s.lo.empty() && f.spread == "band")
      parts.push_back("  " + idx + " using 1:3:4 with filledcurves " + lt_of(s, k) +
                      " fillstyle transparent solid 0.18 noborder notitle");
  }
  for (size_t k = 0; k < f.series.size(); ++k) {
    const Series& s = f.series[k];
    const std::string idx = "data index " + std::to_string(block[k]);
    if (s.key_only)
      parts.push_back("  keyentry with linespoints " + lt_of(s, k) + title_of(s));
    else if (!s.lo.empty() && f.spread == "errorbars")
      parts.push_back("  " + idx + " using 1:2:3:4 with yerrorlines " + lt_of(s, k) + title_of(s));
    else
      parts.push_back("  " + idx + " using 1:2 with linespoints " + lt_of(s, k) + pi + title_of(s));
  }
  for (size_t i = 0; i < parts.size(); ++i) b += parts[i] + (i + 1 < parts.size() ? ", \\\n" : "\n");
  return fig;
}

}  // namespace gradflow
