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
  if (count[best] > 0) return "below";  // every corner holds data: below the axes
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

namespace {

// Characters of a legend entry as drawn (enhanced-text markup such as {/:Italic l} and _{...} not counted).
size_t drawn_length(const std::string& t) {
  size_t n = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.compare(i, 9, "{/:Italic") == 0) { i += 9; continue; }
    const unsigned char c = static_cast<unsigned char>(t[i]);
    if (c == '{' || c == '}' || c == '_' || c == '^') continue;
    if ((c & 0xC0) == 0x80) continue;  // UTF-8 continuation byte
    ++n;
  }
  return n;
}

// inches per character of the kFontPt serif font (cairo's DejaVu Serif, wide letters), and per legend row
// (spacing 1.1, with the sample's marker), as gnuplot's SVG terminal reckons them (its estimates are the largest
// of the three formats'; measured at 8 pt: 0.07 in and 0.17 in)
constexpr double kCharWidth = 0.07 * kFontPt / 8;
constexpr double kKeyRowHeight = 0.17 * kFontPt / 8;

// Whether labelled x tics would touch: their centres closer than half their widths plus a gap, on an axis
// axis_w inches wide spanning the data's x range (padded as line_figure pads it).
bool xtics_collide(const std::vector<std::pair<double, std::string>>& tics, const Range& rx, bool logx, double axis_w,
                   bool categorical) {
  if (tics.size() < 2 || rx.empty()) return false;
  auto t = [&](double v) { return logx ? std::log10(v) : v; };
  double lo = t(logx ? rx.pos_lo : rx.lo), hi = t(rx.hi);
  if (!(hi > lo)) return false;
  const double pad = categorical ? 0.5 : 0.04 * (hi - lo);
  lo -= pad, hi += pad;
  std::vector<std::pair<double, double>> at;  // (position in inches, half width)
  for (const auto& [x, label] : tics)
    if (!logx || x > 0) at.emplace_back((t(x) - lo) / (hi - lo) * axis_w, 0.5 * static_cast<double>(drawn_length(label)) * kCharWidth);
  std::sort(at.begin(), at.end());
  for (size_t i = 1; i < at.size(); ++i)
    if (at[i].first - at[i - 1].first < at[i].second + at[i - 1].second + 0.06) return true;
  return false;
}

// A style without its dash ("lt 3 pt 5 dt 2" -> "lt 3 pt 5", "lc rgb '#707070' dt (10,4)" -> "lc rgb '#707070'"):
// error bars are drawn solid in the series' colour and marker (its dash would break them up; gnuplot refuses a
// second dt in one style).
std::string without_dash(const std::string& style) {
  const auto at = style.find(" dt ");
  if (at == std::string::npos) return style;
  auto end = style.find(style.compare(at + 4, 1, "(") == 0 ? ')' : ' ', at + 4);
  if (end != std::string::npos && style[end] == ')') ++end;
  return style.substr(0, at) + (end == std::string::npos ? "" : style.substr(end));
}

std::vector<std::string> legend_titles(const std::vector<Series>& series) {
  std::vector<std::string> t;
  for (const auto& s : series)
    if (!s.title.empty()) t.push_back(s.title);
  return t;
}

}  // namespace

KeyBox key_box(const std::vector<std::string>& titles, double width, int rows) {
  KeyBox k;
  if (titles.empty()) return k;
  size_t longest = 0;
  for (const auto& t : titles) longest = std::max(longest, drawn_length(t));
  const double col = (static_cast<double>(longest) + 8) * kCharWidth;  // text, sample (samplen 3.5), gaps
  const int n = static_cast<int>(titles.size());
  const int fit = std::max(1, static_cast<int>((width - 0.8) / col));  // within the axes' width (gnuplot drops
                                                                        // the columns that do not fit)
  k.rows = rows > 0 ? rows : (n + fit - 1) / fit;
  k.cols = (n + k.rows - 1) / k.rows;
  k.height = k.rows * kKeyRowHeight + 0.1;
  return k;
}

std::vector<Series> items_legend(const TwoWay& t, const std::vector<std::string>& titles) {
  if (!t.colour.empty()) return two_way_legend(t.colours, t.marks);
  std::vector<Series> legend;
  for (size_t r = 0; r < titles.size(); ++r) {
    Series k;
    k.key_only = true;
    k.title = titles[r];
    k.style_spec = series_style(static_cast<int>(r));
    legend.push_back(std::move(k));
  }
  return legend;
}

int items_legend_rows(const TwoWay& t) {
  return t.colour.empty() ? 0 : static_cast<int>(std::max(t.colours.size(), t.marks.size()));
}

std::vector<Series> two_way_legend(const std::vector<std::string>& colours, const std::vector<std::string>& marks) {
  std::vector<Series> out;
  const size_t n = std::max(colours.size(), marks.size());
  for (int col = 0; col < 2; ++col)  // the colours in the first column, the marks in the second; blank entries pad
    for (size_t i = 0; i < n; ++i) {  // (gnuplot fills a legend column by column, maxrows n at a time)
      Series k;
      k.key_only = true;
      const auto& names = col == 0 ? colours : marks;
      if (i >= names.size()) {
        k.title = " ", k.with = "lines", k.style_spec = "lc rgb '#ffffff'";
      } else if (col == 0) {
        k.title = names[i], k.with = "lines", k.style_spec = colour_style(static_cast<int>(i)) + " dt 1";
      } else {
        k.title = names[i], k.style_spec = std::string(kNeutralColour) + " " + mark_style(static_cast<int>(i));
      }
      out.push_back(std::move(k));
    }
  return out;
}

TwoWay two_way(const std::vector<std::vector<std::string>>& factors) {
  TwoWay t;
  if (factors.size() < 2) return t;
  for (const auto& f : factors)
    if (f.size() != factors[0].size()) return t;
  std::vector<size_t> varying;
  for (size_t j = 0; j < factors[0].size(); ++j) {
    bool v = false;
    for (const auto& f : factors) v |= f[j] != factors[0][j];
    if (v) varying.push_back(j);
  }
  if (varying.size() != 2) return t;
  auto level = [](std::vector<std::string>& names, const std::string& v) {
    auto it = std::find(names.begin(), names.end(), v);
    if (it == names.end()) names.push_back(v), it = names.end() - 1;
    return static_cast<int>(it - names.begin());
  };
  for (const auto& f : factors) {
    t.colour.push_back(level(t.colours, f[varying[0]]));
    t.mark.push_back(level(t.marks, f[varying[1]]));
  }
  return t;
}

std::string two_way_style(const TwoWay& t, size_t i) { return colour_style(t.colour[i]) + " " + mark_style(t.mark[i]); }

Figure line_figure(const LineFigure& f, int first_block) {
  require(!f.series.empty(), "nothing to plot: no series found in the inputs; fix: check the report files");
  const auto drawn = std::count_if(f.series.begin(), f.series.end(), [](const Series& s) { return !s.key_only; });
  require(drawn <= kMaxSeries, "the figure would draw " + std::to_string(drawn) + " lines in one panel (one per group "
                               "or run of the inputs), more than the " + std::to_string(kMaxSeries) + " that can be "
                               "told apart and drawn in seconds; fix: plot a report of fewer groups (fewer "
                               "placements, depths or values)");
  Range rx, ry;
  for (const auto& s : f.series) {
    for (double v : s.x) rx.add(v);
    for (double v : s.y) ry.add(v);
    for (double v : s.lo) ry.add(v);
    for (double v : s.hi) ry.add(v);
  }
  if (std::isfinite(f.y_lo) && std::isfinite(f.y_hi)) ry.add(f.y_lo), ry.add(f.y_hi);  // a range shared by panels
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
  // the axes' size in inches (margins of about 0.75 in across, 0.6 in up): how many tics fit without touching
  const double axis_w = std::max(f.width - 0.93, 0.5);
  const double axis_h = f.height > 0 ? f.height : std::max(f.width * f.aspect - 0.6, 0.5);
  // at most a tic label per 0.22 in of axis: the labels stay a line apart on a short panel
  const int max_ytics = std::max(3, static_cast<int>(axis_h / 0.22));
  if (logy) {
    b += log_axis("y", ry.pos_lo, ry.hi, max_ytics);
  } else {
    const bool from_zero = ry.lo >= 0 && ry.lo < 0.2 * ry.hi;
    if (from_zero) b += "set yrange [0:*]\n";
    b += linear_tics_step("y", from_zero ? 0.0 : ry.lo, ry.hi, max_ytics - 1);
  }
  if (logx) b += log_axis("x", rx.pos_lo, rx.hi, std::max(3, static_cast<int>(axis_w / 0.4)));
  if (!f.xtics.empty()) {
    b += "set xtics (";
    for (size_t i = 0; i < f.xtics.size(); ++i)
      b += (i ? ", " : "") + gp_quote(f.xtics[i].second) + " " + gp_num(f.xtics[i].first);
    b += ") noenhanced" + std::string(xtics_collide(f.xtics, rx, logx, axis_w, f.categorical) ? " rotate by 30 right" : "") + "\n";
    b += "unset mxtics\n";
  }
  if (!logx && !rx.empty()) {
    // categories (placements, init schemes): half a slot on each side, so the outer labels stay on the figure
    const double pad = f.categorical ? 0.5 : rx.hi > rx.lo ? 0.03 * (rx.hi - rx.lo) : 0.5;
    b += "set xrange [" + gp_num(rx.lo - pad) + ":" + gp_num(rx.hi + pad) + "]\n";
    if (f.integer_x && f.xtics.empty()) {
      const double span = rx.hi - rx.lo;
      const int step = span <= 8 ? 1 : span <= 16 ? 2 : span <= 40 ? 5 : span <= 80 ? 10 : 20;
      b += "set xtics " + std::to_string(step) + "\nset mxtics " + std::to_string(step > 1 ? step : 1) + "\n";
    }
  }
  if (!f.title.empty()) {  // a title of several lines: 'line 1'."\n".'line 2'
    std::string t, line;
    for (size_t i = 0; i <= f.title.size(); ++i) {
      if (i < f.title.size() && f.title[i] != '\n') { line += f.title[i]; continue; }
      t += (t.empty() ? "" : ".\"\\n\".") + gp_quote(line);
      line.clear();
    }
    b += "set title " + t + " noenhanced\n";
  }
  const std::vector<std::string> titles = legend_titles(f.series);
  std::string where = f.key;
  if (titles.empty() || where == "none") where = "none";
  else if (where == "auto")
    where = static_cast<int>(titles.size()) > kMaxKeyInside ? "below" : emptiest_corner(f.series, logx, logy);
  if (where == "none") {
    b += "unset key\n";
  } else if (where == "below") {  // below the axes, entries column by column; the figure grows by its height
    const KeyBox k = key_box(titles, f.width, f.key_rows);
    b += "set key below center noopaque maxrows " + std::to_string(k.rows) + " height 1\n";  // height: cairo's fonts are taller than gnuplot reckons
    fig.extra_height = k.height;
  } else {
    b += "set key " + where + "\n";
  }
  b += f.extra;
  // markers every k points: the figure's k, or (0) per series: a series longer than 12 points (a deep model) keeps
  // about 8 markers, so the markers of shallower models under it stay visible
  const auto pi_of = [&f](const Series& s) {
    const size_t m = s.x.size();
    const size_t k = f.point_interval > 0 ? static_cast<size_t>(f.point_interval) : m > 12 ? (m + 7) / 8 : 1;
    return k > 1 ? " pointinterval " + std::to_string(k) : std::string();
  };
  b += "plot \\\n";
  std::vector<std::string> parts;
  auto lt_of = [&](const Series& s, size_t k) {
    return !s.style_spec.empty() ? s.style_spec : series_style(s.style > 0 ? s.style - 1 : static_cast<int>(k));
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
      parts.push_back("  keyentry with " + (s.with.empty() ? "linespoints" : s.with) + " " + lt_of(s, k) + title_of(s));
    else if (!s.lo.empty() && f.spread == "errorbars") {  // the bars solid in the series' colour, then its line
      parts.push_back("  " + idx + " using 1:2:3:4 with yerrorbars " + without_dash(lt_of(s, k)) + " dt 1 notitle");
      parts.push_back("  " + idx + " using 1:2 with linespoints " + lt_of(s, k) + title_of(s));
    }
    else
      parts.push_back("  " + idx + " using 1:2 with " + (s.with.empty() ? "linespoints" : s.with) + " " + lt_of(s, k) +
                      (s.with.empty() ? pi_of(s) : "") + title_of(s));
  }
  for (size_t i = 0; i < parts.size(); ++i) b += parts[i] + (i + 1 < parts.size() ? ", \\\n" : "\n");
  return fig;
}

}  // namespace gradflow

namespace gradflow {

Figure panel_figure(std::vector<LineFigure> panels, const std::vector<Series>& legend, int cols, double width,
                    double panel_height, int legend_rows, const std::string& title) {
  require(!panels.empty(), "nothing to plot: no panel; fix: check the report files");
  cols = std::max(1, std::min(cols, static_cast<int>(panels.size())));
  const int rows = (static_cast<int>(panels.size()) + cols - 1) / cols;
  const double cell = width / cols;
  // inches: y tics and label (room for five-character tic labels such as 1.005 and the rotated label beside them:
  // 0.86 put that label off the canvas in a left-hand panel), x tics and label
  constexpr double left = 0.98, right = 0.15, bottom = 0.58;
  std::vector<Figure> built;
  std::vector<double> rotated;  // inches the rotated x tic labels of each panel take beyond the usual
  std::vector<double> key_pad(static_cast<size_t>(rows), 0.0), top(static_cast<size_t>(rows), 0.1);
  int block = 0;
  for (size_t i = 0; i < panels.size(); ++i) {
    panels[i].width = cell;
    panels[i].height = panel_height;
    built.push_back(line_figure(panels[i], block));
    for (const auto& s : panels[i].series) block += s.key_only ? 0 : 1;
    const size_t r = i / static_cast<size_t>(cols);
    // the panel's own legend below its axes, and rotated x tic labels, take room under the axes
    rotated.push_back(built.back().body.find("rotate by") != std::string::npos ? 0.4 : 0.0);
    // (0.2: the key's `height 1` adds half a line under its last row, which ran off the bottom of the canvas)
    key_pad[r] = std::max(key_pad[r], built.back().extra_height + rotated.back() + (built.back().extra_height > 0 ? 0.2 : 0.0));
    if (!panels[i].title.empty())  // gnuplot draws a title about a line above the axes: room for each line
      top[r] = std::max(top[r], 0.26 + 0.16 * static_cast<double>(1 + std::count(panels[i].title.begin(), panels[i].title.end(), '\n')));
  }
  const std::vector<std::string> shared = legend_titles(legend);
  const KeyBox lk = key_box(shared, width, legend_rows);
  const std::vector<std::string> title_text = title_lines(title, width);
  std::vector<double> y0(static_cast<size_t>(rows) + 1, title_band(title_text));  // inches from the top to each row
  for (int r = 0; r < rows; ++r) y0[r + 1] = y0[r] + top[r] + panel_height + bottom + key_pad[r] + (r + 1 < rows ? 0.1 : 0.0);
  const double H = y0[rows] + (shared.empty() ? 0.0 : lk.height + 0.08);
  auto sx = [&](double in) { return gp_num(in / width); };
  auto sy = [&](double in) { return gp_num(1 - in / H); };  // inches from the top -> screen y

  Figure fig;
  fig.aspect = H / width;
  fig.titled = !title_text.empty();
  fig.body = "set multiplot" + (fig.titled ? " title " + gp_lines(title_text) + " noenhanced" : std::string()) + "\n";
  for (size_t i = 0; i < panels.size(); ++i) {
    const size_t r = i / static_cast<size_t>(cols), c = i % static_cast<size_t>(cols);
    const double x0 = static_cast<double>(c) * cell, yt = y0[r] + top[r];
    std::string body = built[i].body;
    const std::string below = "set key below center noopaque";
    const auto at = body.find(below);
    if (at != std::string::npos) {  // the panel's own legend, centred under its axes, but never past its cell:
      // a wide legend (long names) of a right-hand panel ran its samples off the canvas (issue 38)
      const std::vector<std::string> titles = legend_titles(panels[i].series);
      size_t longest = 0;
      for (const auto& t : titles) longest = std::max(longest, drawn_length(t));
      const KeyBox k = key_box(titles, cell, panels[i].key_rows);
      const double key_w = 1.1 * k.cols * (static_cast<double>(longest) + 8) * kCharWidth;  // gnuplot's own is wider
      const double lo = x0 + key_w / 2 + 0.1, hi = x0 + cell - key_w / 2 - 0.1;
      const double centre = lo > hi ? x0 + cell / 2 : std::clamp(x0 + (left + cell - right) / 2, lo, hi);
      // (noopaque kept: under the axes there is no data to hide, and the base style's opaque box is as wide as
      // gnuplot's column estimate, which ran past the canvas for a right-hand panel of nine entries)
      body.replace(at, below.size(), "set key at screen " + sx(centre) + "," +
                                         sy(yt + panel_height + bottom + rotated[i] + 0.05) + " center top noopaque");
    }
    fig.body += "reset\n" + base_style() + "set lmargin at screen " + sx(x0 + left) + "\nset rmargin at screen " +
                sx(x0 + cell - right) + "\nset tmargin at screen " + sy(yt) + "\nset bmargin at screen " +
                sy(yt + panel_height) + "\n" + body;
    fig.data += (fig.data.empty() ? "" : "\n\n") + built[i].data;
  }
  if (!shared.empty()) {  // the shared legend: an empty plot that draws only its key
    fig.body += "reset\n" + base_style() + "unset border\nunset tics\nset xrange [0:1]\nset yrange [0:1]\n";
    fig.body += "set lmargin at screen 0\nset rmargin at screen 1\nset tmargin at screen " + sy(y0[rows]) +
                "\nset bmargin at screen 0\n";
    fig.body += "set key at screen 0.5," + sy(y0[rows] + 0.04) + " center top noopaque maxrows " + std::to_string(lk.rows) + "\n";
    fig.body += "plot NaN notitle";
    for (const auto& s : legend) {
      if (s.title.empty()) continue;
      fig.body += ", \\\n  keyentry with " + (s.with.empty() ? "linespoints" : s.with) + " " + s.style_spec + " title " +
                  gp_quote(s.title) + (s.enhanced ? "" : " noenhanced");
    }
    fig.body += "\n";
  }
  fig.body += "unset multiplot\n";
  return fig;
}

}  // namespace gradflow
