// grid_figure.cpp — see grid_figure.hpp. Cells are gnuplot boxxyerror boxes coloured by the palette (so uneven
// cells and log axes need no regular image grid), overlapping by a thousandth of the range so no seam shows;
// contour lines are drawn twice, white and wide under black and thin, so they read on every colour.
#include "grid_figure.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "contour.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/plot/style.hpp"
#include "gradflow/report/number_text.hpp"

namespace gradflow {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kLabelHalfWidth = 0.11, kLabelHalfHeight = 0.07;  // half a contour label, as panel fractions

// A contour level as its label: as the colour bar writes it (10^{-8} on a bar of powers of ten; 0.5 otherwise).
std::string level_text(double level, bool decades) {
  const double e = std::round(std::log10(level));
  if (decades && level > 0 && std::abs(level / std::pow(10.0, e) - 1) < 1e-9)
    return e == 0 ? "1" : "10^{" + number_text(e) + "}";
  return number_text(level);
}

const char* kViridis =
    "set palette defined (0 '#440154', 1 '#482878', 2 '#3E4A89', 3 '#31688E', 4 '#26828E', 5 '#1F9E89', "
    "6 '#35B779', 7 '#6DCD59', 8 '#B4DE2C', 9 '#FDE725')\n";

// Equal steps of f(x) (within 1e-6 relative): f = log for geometric values, identity for arithmetic ones.
bool even_steps(const std::vector<double>& x, bool log) {
  if (x.size() < 3) return false;
  const auto f = [&](double v) { return log ? std::log(v) : v; };
  const double step = f(x[1]) - f(x[0]);
  for (size_t k = 1; k + 1 < x.size(); ++k)
    if (std::abs(f(x[k + 1]) - f(x[k]) - step) > 1e-6 * std::max(std::abs(step), 1e-300)) return false;
  return true;
}

std::string tic_name(const std::string& v) { return v == "inv-sqrt-2L" ? "1/√(2L)" : v; }

size_t longest_name(const GridAxis& a) {
  size_t chars = 0;
  for (const auto& v : a.values) chars = std::max(chars, tic_name(v).size());
  return chars;
}

// Every how many values a tic is named on an axis `length` inches long, so that the names do not touch (about
// 0.06 in a character across, 0.16 in a line up): 1, 2, 5, 10, 20, ... (labels at round indices: layers 0, 5, 10).
size_t tic_every(const std::string& axis, const GridAxis& a, double length) {
  size_t every = a.tic_every > 0 ? static_cast<size_t>(a.tic_every) : 1;
  if (a.tic_every > 0 || a.values.size() < 2) return every;
  const double range = a.edges.back() - a.edges.front();
  double gap = length;  // the closest two tics, in inches
  for (size_t k = 1; k < a.t.size(); ++k) gap = std::min(gap, (a.t[k] - a.t[k - 1]) / range * length);
  const double need = axis == "x" ? 0.06 * static_cast<double>(longest_name(a)) + 0.08 : 0.16;
  for (size_t m = 1; every < a.values.size() && gap * static_cast<double>(every) < need; m *= 10)
    for (size_t step : {m, 2 * m, 5 * m})
      if (gap * static_cast<double>(every) < need) every = step;
  return every;
}

// `set xtics (...)`: a tic at every value, named as given: all of them upright (a.upright) or slanted (`slant`: ten
// or fewer values whose names would touch level), else every tic_every-th.
std::string tics(const std::string& axis, const GridAxis& a, double length, bool slant = false) {
  const bool all = (a.upright || slant) && axis == "x";
  const size_t every = all ? 1 : tic_every(axis, a, length);
  std::string s = "set " + axis + "tics (";
  for (size_t k = 0; k < a.values.size(); ++k)
    s += (k ? ", " : "") + gp_quote(k % every == 0 ? tic_name(a.values[k]) : "") + " " + gp_num(a.t[k]);
  return s + ") noenhanced" + (all ? a.upright ? " rotate by 90 right" : " rotate by 45 right" : "") + "\n";
}

// The length in inches of an enhanced-text label on the page (markup left out), at about 0.064 in a character.
double label_inches(const std::string& label) {
  std::string plain;
  for (size_t i = 0; i < label.size(); ++i) {
    if (label.compare(i, 10, "{/:Italic ") == 0) { i += 9; continue; }
    const unsigned char c = static_cast<unsigned char>(label[i]);
    if (c == '{' || c == '}' || c == '_' || c == '^' || (c & 0xC0) == 0x80) continue;  // markup, UTF-8 continuation
    plain += label[i];
  }
  return 0.064 * static_cast<double>(plain.size());
}

std::string coordinate(const GridAxis& a) {
  return std::string(a.scale == GridScale::Log ? "log10 " : "") + a.name + (a.scale == GridScale::Category ? " (index)" : "");
}

}  // namespace

GridAxis grid_axis(const std::string& name, const std::string& label, const std::vector<std::string>& order,
                   const std::map<std::string, double>& num, bool log_ok) {
  GridAxis a;
  a.name = name;
  a.label = label;
  a.values = order;
  bool numeric = true, positive = true;
  for (const auto& n : order) {
    const double v = num.at(n);
    numeric &= std::isfinite(v);
    positive &= v > 0;
  }
  std::vector<double> x;
  if (numeric) {
    std::stable_sort(a.values.begin(), a.values.end(),
                     [&](const std::string& p, const std::string& q) { return num.at(p) < num.at(q); });
    for (const auto& n : a.values) x.push_back(num.at(n));
    for (size_t k = 1; k < x.size(); ++k) numeric &= x[k] > x[k - 1];
    if (!numeric) a.values = order;
  }
  if (numeric && positive && x.size() >= 2 && (log_ok || even_steps(x, true))) a.scale = GridScale::Log;
  else if (numeric && (x.size() == 2 || even_steps(x, false))) a.scale = GridScale::Linear;
  for (size_t k = 0; k < a.values.size(); ++k)
    a.t.push_back(a.scale == GridScale::Log ? std::log10(x[k]) : a.scale == GridScale::Linear ? x[k] : static_cast<double>(k));
  const size_t n = a.t.size();
  if (n == 0) return a;
  a.edges.resize(n + 1);
  if (n == 1) {
    a.edges = {a.t[0] - 0.5, a.t[0] + 0.5};
  } else {
    for (size_t k = 1; k < n; ++k) a.edges[k] = (a.t[k - 1] + a.t[k]) / 2;
    a.edges[0] = a.t[0] - (a.t[1] - a.t[0]) / 2;
    a.edges[n] = a.t[n - 1] + (a.t[n - 1] - a.t[n - 2]) / 2;
  }
  return a;
}

Figure grid_figure(const GridAxis& ax, const GridAxis& ay, const std::vector<GridPanel>& panels, const GridStyle& st,
                   const PlotOptions& o, const std::string& metric) {
  const size_t nx = ax.values.size(), ny = ay.values.size();
  // the colour scale, shared by the panels
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  bool positive = true;
  for (const auto& p : panels)
    for (double v : p.v)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v), positive &= v > 0;
  require(o.logy != "on" || positive, "--logy on: metric '" + metric + "' has values <= 0, which a log colour scale "
                                      "cannot show; fix: --logy off (or auto)");
  const bool log_colour = o.logy == "on" || (o.logy == "auto" && positive && spans_decades(lo, hi));
  double clo = std::isnan(st.lo) ? lo : st.lo, chi = std::isnan(st.hi) ? hi : st.hi;
  if (!(chi > clo)) {  // one value everywhere: a small window around it
    if (log_colour) clo /= 1.1, chi *= 1.1;
    else clo -= std::max(0.5, std::abs(clo) * 0.1), chi += std::max(0.5, std::abs(chi) * 0.1);
  }
  const std::vector<double> levels = !st.contours ? std::vector<double>{}
                                     : st.levels.empty() ? nice_levels(clo, chi, log_colour) : st.levels;
  for (double l : levels)
    require(std::isfinite(l) && (!log_colour || l > 0), "--levels " + number_text(l) + " cannot be drawn on a log "
                                                        "colour scale; fix: give positive levels, or --logy off");

  // layout (inches): panels side by side (rows of `cols`), the colour box at the right
  // the left margin holds the y tics' names and the rotated y label (about 0.1 in a character of a tic name)
  size_t ytic_chars = 0;
  for (const auto& v : ay.values) ytic_chars = std::max(ytic_chars, tic_name(v).size());
  const double W = o.width, cbw = 1.05, right = 0.12, top = 0.24;
  const double left = std::max(0.6, 0.1 * static_cast<double>(ytic_chars) + 0.38);
  const int n = static_cast<int>(panels.size());
  require(n > 0, "nothing to plot: no panel; fix: check the report files");
  const int cols = std::max(1, std::min(n, static_cast<int>((W - cbw) / 1.45)));
  const int rows = (n + cols - 1) / cols;
  const double cell_w = (W - cbw) / cols, aw = cell_w - left - right;
  require(aw > 0.3, "--width " + number_text(W) + " leaves no room for " + std::to_string(n) +
                        " panels; fix: a larger --width");
  // x tic names that would touch: ten or fewer are all named, slanted (a reader looks for the value the text
  // discusses, λ = 1); more are thinned. Upright or slanted names take room under the axes.
  const bool slant_x = !ax.upright && ax.values.size() <= 10 && tic_every("x", ax, aw) > 1;
  const double name_w = 0.075 * static_cast<double>(longest_name(ax));
  const double bottom = 0.56 + (ax.upright ? name_w : slant_x ? 0.71 * name_w : 0.0);
  double ah = aw * st.aspect;
  // the colour box spans the rows' axes: tall enough for its label; each panel tall enough for the y label (letters
  // of words run wider than the colour box's symbols: 1.5 times label_inches, measured on "residual weight λ")
  ah = std::max(ah, (label_inches(st.cblabel) + 0.1 + top + bottom) / rows - top - bottom);
  ah = std::max(ah, 1.5 * label_inches(ay.label) + 0.1);
  if (o.height > 0) ah = (o.height - rows * (top + bottom)) / rows;
  require(ah > 0.3, "--height " + number_text(o.height) + " leaves no room for the panels; fix: a larger --height");
  const std::vector<std::string> title_text = title_lines(o.title, W);
  const double band = title_band(title_text);  // --title above the panels
  const double H = band + rows * (top + ah + bottom);
  const double bar_inches = rows * (top + ah + bottom) - top - bottom;  // the colour bar's length
  // contour labels read as the colour bar does: 10^{-8} where the bar's tics are powers of ten (log_axis)
  const bool decade_format = log_colour && std::log10(chi / clo) > 3;
  const auto sx = [&](double inch) { return gp_num(inch / W); };
  const auto sy = [&](double inch) { return gp_num(1 - inch / H); };  // inches from the top

  Figure fig;
  fig.aspect = H / W;
  fig.titled = !title_text.empty();
  std::string& b = fig.body;
  std::string& d = fig.data;
  b += "set multiplot" + (fig.titled ? " title " + gp_lines(title_text) + " noenhanced" : std::string()) + "\n";
  const double xr = ax.edges.back() - ax.edges.front(), yr = ay.edges.back() - ay.edges.front();
  const double pad = 1e-3 * std::max(xr, yr);
  int block = 0;
  for (int p = 0; p < n; ++p) {
    const GridPanel& panel = panels[static_cast<size_t>(p)];
    const int r = p / cols, c = p % cols;
    const double x0 = c * cell_w, yt = band + r * (top + ah + bottom) + top;
    // cells
    if (block) d += "\n\n";
    d += "# " + panel.title + ": " + st.what + "\n";
    d += "# cells: x y x_lo x_hi y_lo y_hi value; x = " + coordinate(ax) + ", y = " + coordinate(ay) + "\n";
    bool cells = false;
    for (size_t i = 0; i < nx; ++i)
      for (size_t j = 0; j < ny; ++j) {
        const double val = panel.v[i * ny + j];
        if (!std::isfinite(val)) continue;
        cells = true;
        d += gp_num(ax.t[i]) + " " + gp_num(ay.t[j]) + " " + gp_num(ax.edges[i] - pad) + " " +
             gp_num(ax.edges[i + 1] + pad) + " " + gp_num(ay.edges[j] - pad) + " " + gp_num(ay.edges[j + 1] + pad) +
             " " + gp_num(val) + "\n";
      }
    const int cell_block = block++;
    // contour lines (segments separated by one blank line), then one label per level, where its line lies
    // farthest inside the panel
    std::vector<double> field = panel.v;
    if (log_colour)
      for (double& f : field) f = f > 0 ? std::log10(f) : kNaN;
    std::string lines, labels;
    std::vector<std::pair<double, double>> placed;  // the labels so far, as fractions of the panel's width, height
    for (double level : levels) {
      const std::vector<Segment> segs = contour_segments(ax.t, ay.t, field, log_colour ? std::log10(level) : level);
      double best = -1e300, lx = 0, ly = 0;
      for (const auto& s : segs) {
        lines += gp_num(s.x0) + " " + gp_num(s.y0) + "\n" + gp_num(s.x1) + " " + gp_num(s.y1) + "\n\n";
        const double mx = (s.x0 + s.x1) / 2, my = (s.y0 + s.y1) / 2;
        const double u = (mx - ax.edges.front()) / xr, v = (my - ay.edges.front()) / yr;
        // never on a label placed before (a label's box: about a fifth of the panel across, an eighth up); then as
        // far inside the panel as the line goes
        bool free = true;
        for (const auto& [pu, pv] : placed) free &= std::abs(u - pu) >= 2 * kLabelHalfWidth || std::abs(v - pv) >= kLabelHalfHeight * 2;
        const double inside = std::min({u, 1 - u, v, 1 - v});
        if (free && inside > best + 1e-12) best = inside, lx = mx, ly = my;
      }
      if (best == -1e300) continue;  // no line, or every place on it is taken: the colour bar gives the level
      placed.emplace_back((lx - ax.edges.front()) / xr, (ly - ay.edges.front()) / yr);
      labels += gp_num(lx) + " " + gp_num(ly) + " \"" + level_text(level, log_colour && decade_format) + "\"\n";
    }
    int line_block = -1, label_block = -1;
    if (!lines.empty()) {
      d += "\n\n# contour lines at " + std::string(log_colour ? "log10 of " : "") + "the levels: x y pairs\n" + lines;
      line_block = block++;
      d += "\n# contour labels: x y level\n" + labels;
      label_block = block++;
    }
    // the panel
    b += "reset\nset border 15 lw 0.8\nset tics out scale 0.5 nomirror\nunset key\n";
    b += kViridis;
    b += "set cbrange [" + gp_num(clo) + ":" + gp_num(chi) + "]\n";
    // the colour bar's tics as a y axis has them: 1-2-5 on a log scale of under two decades, powers of ten above
    if (log_colour) b += log_axis("cb", clo, chi, std::max(3, static_cast<int>(bar_inches / 0.4)));
    else b += linear_tics_step("cb", clo, chi, std::max(2, static_cast<int>(bar_inches / 0.4)));
    b += "set lmargin at screen " + sx(x0 + left) + "\nset rmargin at screen " + sx(x0 + cell_w - right) +
         "\nset tmargin at screen " + sy(yt) + "\nset bmargin at screen " + sy(yt + ah) + "\n";
    b += "set xrange [" + gp_num(ax.edges.front()) + ":" + gp_num(ax.edges.back()) + "]\nset yrange [" +
         gp_num(ay.edges.front()) + ":" + gp_num(ay.edges.back()) + "]\n";
    b += tics("x", ax, aw, slant_x) + tics("y", ay, ah);
    b += "set xlabel " + gp_quote(ax.label) + " offset 0,0.3\n";
    if (c == 0) b += "set ylabel " + gp_quote(ay.label) + " offset 0.8,0\n";
    b += "set title " + gp_quote(panel.title) + " noenhanced offset 0,-0.6\n";
    if (p == n - 1) {
      const double bh = bar_inches;
      b += "set colorbox user origin screen " + sx(cols * cell_w + 0.1) + ", screen " + sy(band + top + bh) + " size screen " +
           gp_num(0.1 / W) + ", screen " + gp_num(bh / H) + "\n";
      b += "set cblabel " + gp_quote(st.cblabel) + (st.cblabel_plain ? " noenhanced" : "") + " offset 0.5,0\n"
           "set cbtics scale 0.5\n";
    } else {
      b += "unset colorbox\n";
    }
    b += "set style textbox opaque fc rgb '#ffffff' noborder margins 0.5,0.5\n";
    b += cells ? "plot data index " + std::to_string(cell_block) +
                     " using 1:2:3:4:5:6:7 with boxxyerror fs solid 1.0 noborder lc palette notitle"
               : std::string("plot NaN notitle");  // a panel without a value (a partial merge)
    if (line_block >= 0) {
      b += ", \\\n  data index " + std::to_string(line_block) + " using 1:2 with lines lc rgb '#ffffff' lw 2.2 dt 1 notitle";
      b += ", \\\n  data index " + std::to_string(line_block) + " using 1:2 with lines lc rgb '#000000' lw 0.9 dt 1 notitle";
      b += ", \\\n  data index " + std::to_string(label_block) + " using 1:2:3 with labels boxed font '," +
           number_text(decade_format ? kMinLabelPt / 0.8 : kMinLabelPt) + "' notitle";  // 10^{-8}: its exponent at 7 pt
    }
    b += "\n";
  }
  b += "unset multiplot\n";
  return fig;
}

}  // namespace gradflow
