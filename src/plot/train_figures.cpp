// train_figures.cpp — see train_figures.hpp.
#include "train_figures.hpp"

#include <algorithm>
#include <cmath>

#include "gradflow/core/error.hpp"
#include "gradflow/plot/style.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/report/number_text.hpp"

namespace gradflow {
using namespace fields;

StepAxis step_axis(const std::vector<PlotInput>& in, const std::string& logx) {
  require(logx == "on" || logx == "off" || logx == "auto", "--logx '" + logx + "' is unknown; fix: use on, off or auto");
  double first = INFINITY, last = 0;
  auto add = [&](const PlotJson& entries) {
    for (const auto& e : entries) {
      const double s = e.value(kStep, 0.0);
      if (s > 0) first = std::min(first, s);
      last = std::max(last, s);
    }
  };
  for (const auto& i : in) {
    if (i.json.contains(kLog)) add(i.json[kLog]);
    if (i.json.contains(kRuns))
      for (const auto& r : i.json[kRuns]) add(r[kCurve]);
    if (i.kind == InputKind::OverTraining && i.json[kCheckpoints].is_array()) add(i.json[kCheckpoints]);
  }
  StepAxis a;
  a.log = logx == "on" || (logx == "auto" && std::isfinite(first) && spans_decades(first, last));
  if (a.log) require(std::isfinite(first), "--logx on needs steps after 0; fix: train longer or use --logx off");
  a.zero_at = std::isfinite(first) ? first / 4 : 0;
  a.first = std::isfinite(first) ? first : 0;
  a.last = last;
  return a;
}

void apply_step_axis(LineFigure& f, const StepAxis& a) {
  f.xlabel = "step";
  f.logx = a.log ? "on" : "off";
  if (a.log) {  // step 0 stays on the figure: at zero_at, its tic says 0 (the axis is log from the first logged step)
    std::string tics = "set xtics ('0' " + gp_num(a.zero_at);
    const bool fine = a.last < 1000 * a.first;  // 1-2-5 tics over up to three decades, decades beyond
    for (int k = static_cast<int>(std::floor(std::log10(a.first))); k <= static_cast<int>(std::ceil(std::log10(a.last))); ++k)
      for (double m : {1.0, 2.0, 5.0}) {
        const double v = m * std::pow(10.0, k);
        if ((m == 1.0 || fine) && v >= a.first * (1 - 1e-9) && v <= a.last * (1 + 1e-9)) {
          tics += ", " + gp_quote(number_text(v)) + " " + gp_num(v);
        }
      }
    f.extra += tics + ")\nunset mxtics\n";
  } else {
    f.extra += round_xtics(f.series);
  }
}

Figure sweep_panels(const std::vector<PlotInput>& in, const PlotOptions& o, const LineFigure& axes,
                    const StepAxis& step, const std::function<std::vector<CellLine>(const PlotInput&, const PlotJson&)>& lines) {
  struct Panel {
    std::string title;
    std::vector<CellLine> lines;
    size_t placement = 0, depth = 0;  // indices in order of first appearance (the grid's row and column)
  };
  std::vector<std::string> placements;
  std::vector<long long> depths;
  std::vector<Panel> panels;
  std::vector<std::vector<std::string>> factors;  // per line: lr, warmup
  for (const auto& i : in)
    for (const auto& g : i.json[kGroups]) {
      Panel p;
      p.title = (in.size() > 1 ? i.stem + ": " : "") + placement_label(g[kPlacement].get<std::string>()) + ", L=" +
                std::to_string(g[kLayers].get<long long>());
      p.lines = lines(i, g);
      const std::string pl = g[kPlacement].get<std::string>();
      const long long L = g[kLayers].get<long long>();
      if (std::find(placements.begin(), placements.end(), pl) == placements.end()) placements.push_back(pl);
      if (std::find(depths.begin(), depths.end(), L) == depths.end()) depths.push_back(L);
      p.placement = static_cast<size_t>(std::find(placements.begin(), placements.end(), pl) - placements.begin());
      p.depth = static_cast<size_t>(std::find(depths.begin(), depths.end(), L) - depths.begin());
      panels.push_back(std::move(p));
    }
  if (in.size() == 1 && static_cast<int>(placements.size()) <= std::max(1, static_cast<int>(o.width / 2.2)))
    std::stable_sort(panels.begin(), panels.end(), [](const Panel& a, const Panel& b) {  // rows: depths
      return a.depth != b.depth ? a.depth < b.depth : a.placement < b.placement;
    });
  for (const auto& p : panels)
    for (const auto& l : p.lines) factors.push_back({"lr " + number_text(l.lr), "warmup " + std::to_string(l.warmup)});
  // one style per (lr, warmup) cell, the same in every panel
  const TwoWay t = two_way(factors);
  std::vector<std::string> cells;  // "lr 0.001, warmup 0" in order of first appearance (one-way styling)
  for (const auto& f : factors)
    if (std::find(cells.begin(), cells.end(), f[0] + ", " + f[1]) == cells.end()) cells.push_back(f[0] + ", " + f[1]);
  // one y range and one log/linear decision for every panel, so the panels compare at a glance
  double lo = INFINITY, hi = -INFINITY, pos_lo = INFINITY;
  for (const auto& p : panels)
    for (const auto& l : p.lines)
      for (double v : l.series.y)
        if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v), pos_lo = v > 0 ? std::min(pos_lo, v) : pos_lo;
  LineFigure shared = axes;
  if (std::isfinite(lo)) {
    if (shared.logy == "auto") shared.logy = hi > 0 && spans_decades(pos_lo, hi) ? "on" : "off";
    shared.y_lo = shared.logy == "on" ? pos_lo : lo;
    shared.y_hi = hi;
  }
  std::vector<LineFigure> figs;
  size_t item = 0;
  for (auto& p : panels) {
    LineFigure f = shared;
    f.title = p.title;
    f.key = "none";
    for (auto& l : p.lines) {
      Series s = std::move(l.series);
      s.title.clear();
      const std::string cell = factors[item][0] + ", " + factors[item][1];
      s.style_spec = !t.colour.empty() ? two_way_style(t, item)
                                       : series_style(static_cast<int>(std::find(cells.begin(), cells.end(), cell) - cells.begin()));
      ++item;
      f.series.push_back(std::move(s));
    }
    apply_step_axis(f, step);
    if (!f.series.empty()) figs.push_back(std::move(f));
  }
  require(!figs.empty(), "no curves in the train-sweep reports; fix: rerun gradflow train-sweep");
  const std::vector<Series> legend = items_legend(t, cells);
  // a row per depth, a column per placement when they fit (panels at least 2.2 in wide)
  const int fit = std::max(1, static_cast<int>(o.width / 2.2));
  const int cols = static_cast<int>(placements.size()) <= fit ? static_cast<int>(placements.size())
                                                             : std::min(fit, static_cast<int>(figs.size()));
  return panel_figure(std::move(figs), legend, cols, o.width, 1.3, items_legend_rows(t), o.title);
}

}  // namespace gradflow
