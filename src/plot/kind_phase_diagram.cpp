// phase_diagram.cpp — `--kind phase-diagram`: a scalar metric over the grid of a 2-D sweep (`sweep --param A
// --values ... --param2 B --values2 ...`: A across, B up; the mean over seeds of groups[].scalars[--metric]) or of a
// train-sweep (learning rate across, warmup up; a field of groups[].cells[], or converged_fraction = converged /
// runs), as a heatmap with contour lines (grid_figure.hpp), one panel per placement (train-sweep: per placement and
// depth), one colour scale. An axis whose option is a scale (its name holds "scale" or "alpha", or the learning
// rate) or whose values are geometric (6, 12, 24) is logarithmic; evenly spaced values are linear; anything else is
// drawn as equal cells in order.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "gradflow/core/error.hpp"
#include "gradflow/plot/kinds.hpp"
#include "gradflow/report/number_text.hpp"
#include "gradflow/report/fields.hpp"
#include "grid_figure.hpp"
#include "metric_labels.hpp"

namespace gradflow {
using namespace fields;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// One grid cell: its panel, its values on both axes (as given, and as numbers: NaN when not numeric) and the metric.
struct Cell {
  std::string panel;
  std::string xname, yname;
  double x = kNaN, y = kNaN, value = kNaN;
};

struct Grid {
  std::string xparam, yparam;
  std::vector<Cell> cells;
};

bool is_scale(const std::string& p) {
  return p.find("scale") != std::string::npos || p.find("alpha") != std::string::npos || p == kLr;
}

std::string short_number(const PlotJson& v) {
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  return number_text(v.get<double>());
}

Grid sweep_grid(const PlotInput& in, const std::string& metric) {
  const PlotJson& r = in.json;
  require(r.contains(kParam2), "phase-diagram reads a 2-D sweep, and '" + in.path + "' sweeps " +
                                   (r.contains(kParam) ? "only --param " + r[kParam].get<std::string>() : "no option") +
                                   "; fix: run `gradflow sweep --param A --values ... --param2 B --values2 ...`, or "
                                   "draw this report with --kind sensitivity");
  Grid g{r[kParam].get<std::string>(), r[kParam2].get<std::string>(), {}};
  bool any = false;
  for (const auto& grp : r[kGroups]) {
    Cell c;
    c.panel = placement_label(grp.value(kPlacement, std::string("?")));
    c.xname = grp.value(kValue, std::string());
    c.yname = grp.value(kValue2, std::string());
    c.x = json_number(grp, kX);
    c.y = json_number(grp, kX2);
    c.value = json_stat(grp[kScalars], metric).first;
    any |= std::isfinite(c.value);
    g.cells.push_back(std::move(c));
  }
  require(any, unknown_metric(metric, in));
  return g;
}

Grid train_sweep_grid(const PlotInput& in, const std::string& metric) {
  const PlotJson& r = in.json;
  require(r.contains(kGrid) && r.contains(kGroups), "phase-diagram reads a 2-D sweep or a train-sweep report, not the "
                                                    "train report '" + in.path + "'; fix: pass the --json of gradflow "
                                                    "train-sweep or of a 2-D gradflow sweep");
  bool depths = false, widths = false;  // a panel per depth or width when the sweep has several
  for (const auto& grp : r[kGroups]) {
    depths |= grp.value(kLayers, PlotJson()) != r[kGroups][0].value(kLayers, PlotJson());
    widths |= grp.value(kDModel, PlotJson()) != r[kGroups][0].value(kDModel, PlotJson());
  }
  Grid g{kLr, kWarmup, {}};
  bool any = false;
  for (const auto& grp : r[kGroups])
    for (const auto& cell : grp.value(kCells, PlotJson::array())) {
      Cell c;
      c.panel = placement_label(grp.value(kPlacement, std::string("?"))) +
                (widths ? ", d=" + std::to_string(grp.value(kDModel, PlotJson(0)).get<long long>()) : "") +
                (depths ? ", L=" + std::to_string(grp.value(kLayers, PlotJson(0)).get<long long>()) : "");
      c.xname = short_number(cell[kLr]);
      c.yname = short_number(cell[kWarmup]);
      c.x = cell[kLr].get<double>();
      c.y = cell[kWarmup].get<double>();
      if (metric == kConvergedFraction) {
        const double runs = json_number(cell, kRuns);
        c.value = runs > 0 ? json_number(cell, kConverged) / runs : kNaN;
      } else {
        c.value = json_number(cell, metric);
      }
      any |= std::isfinite(c.value);
      g.cells.push_back(std::move(c));
    }
  require(any, unknown_metric(metric, in));
  return g;
}

std::string axis_label(const std::string& param) {
  if (param == kLr) return "learning rate";
  if (param == kWarmup) return "warmup steps";
  return param_label(param);
}

}  // namespace

Figure plot_phase_diagram(const std::vector<PlotInput>& in, const PlotOptions& o) {
  require(in.size() == 1 && (in[0].kind == InputKind::Experiment || in[0].kind == InputKind::Train),
          "phase-diagram reads one report of a 2-D sweep (or a train-sweep); fix: pass the --json of `gradflow sweep "
          "--param A --values ... --param2 B --values2 ...`");
  const bool train = in[0].kind == InputKind::Train;
  const std::string metric = !o.metric.empty() ? o.metric : train ? kConvergedFraction : kDefaultMetric;
  const Grid grid = train ? train_sweep_grid(in[0], metric) : sweep_grid(in[0], metric);

  // the axes and the panels, in order of first appearance; a value name that stands for two numbers (inv-sqrt-2L
  // across depths) makes its axis categorical
  std::vector<std::string> xs, ys, panels;
  std::map<std::string, double> xnum, ynum;
  const auto note = [](std::vector<std::string>& order, std::map<std::string, double>& num, const std::string& name,
                       double v) {
    if (!num.count(name)) order.push_back(name), num[name] = v;
    else if (!(num[name] == v)) num[name] = kNaN;
  };
  for (const auto& c : grid.cells) {
    note(xs, xnum, c.xname, c.x);
    note(ys, ynum, c.yname, c.y);
    if (std::find(panels.begin(), panels.end(), c.panel) == panels.end()) panels.push_back(c.panel);
  }
  const GridAxis ax = grid_axis(grid.xparam, axis_label(grid.xparam), xs, xnum, is_scale(grid.xparam));
  const GridAxis ay = grid_axis(grid.yparam, axis_label(grid.yparam), ys, ynum, is_scale(grid.yparam));
  const auto index_of = [](const GridAxis& a, const std::string& n) {
    return static_cast<size_t>(std::find(a.values.begin(), a.values.end(), n) - a.values.begin());
  };
  std::vector<GridPanel> gp;
  for (const auto& p : panels) {
    GridPanel panel{p, std::vector<double>(ax.values.size() * ay.values.size(), kNaN)};
    for (const auto& c : grid.cells)
      if (c.panel == p) panel.v[index_of(ax, c.xname) * ay.values.size() + index_of(ay, c.yname)] = c.value;
    gp.push_back(std::move(panel));
  }
  GridStyle st;
  st.cblabel = metric_label(metric);
  // a train-sweep cell's shares of runs: named in words, on their whole range (an all-zero grid is "none
  // converged", not a window of -0.5...0.5 around zero)
  const std::map<std::string, std::string> shares = {{kConvergedFraction, "share of runs converged"},
                                                     {"divergence_rate", "share of runs diverged"}};
  if (train && shares.count(metric)) st.cblabel = shares.at(metric), st.lo = 0, st.hi = 1;
  if (train && metric == "final_eval_loss_mean") st.cblabel = "final eval loss (mean over seeds)";
  st.cblabel_plain = st.cblabel.empty();
  if (st.cblabel_plain) st.cblabel = metric;
  st.levels = o.levels;
  st.what = metric + (train ? "" : " (mean over seeds)") + " of " + in[0].path;
  return grid_figure(ax, ay, gp, st, o, metric);
}

}  // namespace gradflow
