// sensitivity.cpp — `--kind sensitivity`: a scalar metric (--metric, default the bottom/top gradient ratio)
// against a sweep's parameter (x = the group's numeric "x"; categories when a value is not numeric), or against
// depth L for a compare report over several depths; mean ± std over seeds as error bars, one line per placement
// (and per value of the second option of a 2-D sweep; its heatmap is --kind phase-diagram).
#include <algorithm>
#include <cmath>
#include <map>

#include "gradflow/core/error.hpp"
#include "gradflow/plot/kinds.hpp"
#include "gradflow/plot/series.hpp"
#include "gradflow/report/fields.hpp"
#include "metric_labels.hpp"
#include "sensitivity_series.hpp"

namespace gradflow {
using namespace fields;

LineFigure sensitivity_figure(const PlotInput& in, const std::string& metric, const std::string& prefix) {
  const auto& groups = in.json[kGroups];
  const std::string param = in.json.value(kParam, std::string());
  const std::string axis = param.empty() ? "layers" : param;
  bool numeric = true;
  for (const auto& g : groups) numeric &= !param.empty() ? g.contains(kX) && g[kX].is_number() : g[kLayers].is_number();
  // A compare at one depth: the placements themselves are the categories (one point each).
  bool one_depth = param.empty();
  for (const auto& g : groups) one_depth &= g[kLayers] == groups[0][kLayers];
  if (one_depth) numeric = false;
  std::vector<std::string> categories;  // non-numeric values, in order of first appearance
  std::vector<std::string> order;       // series keys in plan order
  std::map<std::string, Series> series;
  for (const auto& g : groups) {
    std::string key = placement_label(g.value(kPlacement, std::string("?")));
    if (!param.empty() && param != "layers") key += groups.size() > 1 && g[kLayers] != groups[0][kLayers] ? ", L=" + std::to_string(g[kLayers].get<long long>()) : "";
    if (g.contains(kValue2))  // a 2-D sweep: a line per value of the second option
      key += ", " + g.value(kParam2, std::string()) + "=" + g.value(kValue2, std::string());
    if (!series.count(key)) order.push_back(key), series[key].title = prefix + key;
    double x;
    if (numeric) x = param.empty() ? g[kLayers].get<double>() : g[kX].get<double>();
    else {
      const std::string v = one_depth ? key : g.value(kValue, std::string("?"));
      auto it = std::find(categories.begin(), categories.end(), v);
      if (it == categories.end()) categories.push_back(v), it = categories.end() - 1;
      x = static_cast<double>(it - categories.begin());
    }
    const Spread sp = json_spread(g[kScalars], metric);
    Series& s = series[key];
    s.x.push_back(x);
    s.y.push_back(sp.mean);
    s.lo.push_back(sp.lo);
    s.hi.push_back(sp.hi);
  }
  LineFigure f;
  f.spread = "errorbars";
  f.extra += kSpreadNote;
  f.logx = numeric ? "auto" : "off";
  f.categorical = !numeric;
  for (size_t c = 0; c < categories.size(); ++c) f.xtics.emplace_back(static_cast<double>(c), categories[c]);
  if (numeric && axis == "layers")  // tics at the depths run
    for (const auto& g : groups) {
      const double L = g[kLayers].get<double>();
      if (std::none_of(f.xtics.begin(), f.xtics.end(), [&](const auto& t) { return t.first == L; }))
        f.xtics.emplace_back(L, std::to_string(static_cast<long long>(L)));
    }
  if (numeric && axis != "layers") {  // tics at the swept values, named as the sweep names them (inv-sqrt-2L too)
    std::vector<std::pair<double, std::string>> at;
    for (const auto& g : groups) {
      const double x = g[kX].get<double>();
      std::string v = g.value(kValue, std::string());
      if (v == "inv-sqrt-2L") v = "1/√(2L)";
      if (std::none_of(at.begin(), at.end(), [&](const auto& t) { return t.first == x; })) at.emplace_back(x, v);
    }
    if (at.size() <= 10) f.xtics = at;
  }
  f.xlabel = one_depth ? "placement, {/:Italic L} = " + std::to_string(groups[0][kLayers].get<long long>()) : param_label(axis);
  f.integer_x = axis == "layers";
  if (one_depth) f.key = "none";  // the placements are the x tics: a legend would repeat them
  f.ylabel = metric_label(metric);
  if (f.ylabel.empty()) f.ylabel = metric, f.ylabel_plain = true;
  bool any = false;
  for (const auto& k : order) {
    Series& s = series[k];
    any |= std::any_of(s.y.begin(), s.y.end(), [](double v) { return !std::isnan(v); });
    // points in order of x: a sweep lists its values as given (1, 0.5, inv-sqrt-2L = 0.35 at L = 4), and a line
    // through them in that order would run back across the plot
    std::vector<size_t> by_x(s.x.size());
    for (size_t i = 0; i < by_x.size(); ++i) by_x[i] = i;
    std::stable_sort(by_x.begin(), by_x.end(), [&s](size_t a, size_t b) { return s.x[a] < s.x[b]; });
    Series sorted = s;
    for (size_t i = 0; i < by_x.size(); ++i) {
      sorted.x[i] = s.x[by_x[i]], sorted.y[i] = s.y[by_x[i]];
      if (!s.lo.empty()) sorted.lo[i] = s.lo[by_x[i]], sorted.hi[i] = s.hi[by_x[i]];
    }
    f.series.push_back(std::move(sorted));
  }
  require(any, unknown_metric(metric, in));
  return f;
}

Figure plot_sensitivity(const std::vector<PlotInput>& in, const PlotOptions& o) {
  require(in.size() == 1 && in[0].kind == InputKind::Experiment,
          "sensitivity reads one sweep (or compare over depths) report; fix: pass the --json of gradflow sweep");
  LineFigure f = sensitivity_figure(in[0], o.metric.empty() ? kDefaultMetric : o.metric, "");
  f.logy = o.logy;
  f.width = o.width;
  return line_figure(f);
}

}  // namespace gradflow
