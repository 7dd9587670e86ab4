// token_geometry.cpp — `--kind token-geometry`: how alike the tokens of each block input x_l are, against layer l
// (rank collapse, Dong et al. 2021; Noci et al. 2022): one panel per quantity — the mean pairwise token cosine,
// the distance to rank one ‖X − 1·x̄ᵀ‖_F/‖X‖_F and the stable rank ‖X‖_F²/‖X‖_2² (layers[l].token_geometry,
// docs/math.md §10) — with one line per analyze report or compare group, styled alike in every panel (colour by
// one factor and marker and dash by another when exactly two differ), one legend below, and the seed band
// (mean ± std) of a compare report.
#include <algorithm>
#include <cmath>

#include "gradflow/core/error.hpp"
#include "gradflow/plot/kinds.hpp"
#include "gradflow/plot/series.hpp"
#include "gradflow/plot/style.hpp"
#include "gradflow/report/fields.hpp"

namespace gradflow {
using namespace fields;
namespace {

// A panel's y label: the metric's own label ("distance of x_l to rank one") is longer than a panel is high in a
// one-column figure, where it was cut off; the panels share x_l (the x label says which layer), so it is left out.
std::string panel_label(const Metric& m) {
  if (&m == &metrics::kLayerTokenCosine) return "mean token cosine";
  if (&m == &metrics::kLayerRankOneDistance) return "rank-one distance";
  return "stable rank";
}

}  // namespace

Figure plot_token_geometry(const std::vector<PlotInput>& in, const PlotOptions& o) {
  for (const auto& i : in)
    require(i.kind == InputKind::Analyze || i.kind == InputKind::Experiment,
            "token-geometry reads analyze and compare/sweep reports, not '" + i.path +
                "'; fix: pass the --json of gradflow analyze, compare or sweep");
  struct Line {
    std::string label;
    std::vector<std::string> factors;
    bool analyze;
    const PlotJson* layers;
  };
  std::vector<Line> lines;
  std::vector<const PlotInput*> reports;
  for (const auto& i : in)
    if (i.kind == InputKind::Analyze) reports.push_back(&i);
  const auto rl = report_labels(reports);
  const auto rf = report_factors(reports);
  size_t next = 0;
  for (const auto& i : in) {
    if (i.kind == InputKind::Analyze) {
      lines.push_back({rl[next], rf[next], true, &i.json[kLayers]});
      ++next;
      continue;
    }
    const auto gl = group_labels(i.json);
    const auto gf = group_factors(i.json);
    for (size_t g = 0; g < gl.size(); ++g) {
      std::vector<std::string> f = gf[g];
      if (in.size() > 1) f.insert(f.begin(), i.stem);
      lines.push_back({(in.size() > 1 ? i.stem + ": " : "") + gl[g], f, false, &i.json[kGroups][g][kPerLayer]});
    }
  }
  const auto curve = [](const Line& line, const Metric& m) {
    Series s;
    for (const auto& layer : *line.layers) {
      s.x.push_back(json_number(layer, kIndex));
      if (line.analyze) {
        s.y.push_back(json_number(layer, m.field, m.key));
        continue;
      }
      const Spread sp = json_spread(layer, metric_name(m));
      s.y.push_back(sp.mean);
      s.lo.push_back(sp.lo);
      s.hi.push_back(sp.hi);
    }
    return s;
  };
  const auto empty = [](const Series& s) { return std::all_of(s.y.begin(), s.y.end(), [](double v) { return std::isnan(v); }); };
  std::vector<std::vector<std::string>> factors;
  for (const auto& l : lines) factors.push_back(l.factors);
  const TwoWay t = two_way(factors);
  std::vector<LineFigure> panels;
  for (const Metric* m : {&metrics::kLayerTokenCosine, &metrics::kLayerRankOneDistance, &metrics::kLayerStableRank}) {
    LineFigure f;
    f.integer_x = true;
    // a cosine can be 0 or negative (random tokens): linear unless asked for
    f.logy = m == &metrics::kLayerTokenCosine && o.logy == "auto" ? "off" : o.logy;
    f.xlabel = "layer {/:Italic l}";
    f.ylabel = panel_label(*m);
    f.key = "none";
    f.point_interval = 0;  // deep models: a marker every few layers, the shallower lines visible under them
    for (size_t r = 0; r < lines.size(); ++r) {
      Series s = curve(lines[r], *m);
      s.style_spec = t.colour.empty() ? series_style(static_cast<int>(r)) : two_way_style(t, r);
      f.series.push_back(std::move(s));
    }
    if (std::all_of(f.series.begin(), f.series.end(), empty)) continue;
    panels.push_back(std::move(f));
  }
  require(!panels.empty(), "no token geometry (layers[l].token_geometry) in the inputs; fix: rerun them with a "
                           "gradflow that reports it (docs/report-schema.md)");
  std::vector<std::string> titles;
  for (const auto& line : lines) titles.push_back(line.label);
  const int cols = o.width >= 6 ? 3 : 1;  // a column: panels stacked; a page: side by side
  return panel_figure(std::move(panels), items_legend(t, titles), cols, o.width, cols == 1 ? 1.4 : 1.7,
                      items_legend_rows(t), o.title);
}

}  // namespace gradflow
