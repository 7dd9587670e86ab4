// jacobian_norms.cpp — `--kind jacobian-norms`: against layer l, the spectral norm of the block Jacobian
// B_l = ∂x_{l+1}/∂x_l, of the product P_l = ∂y/∂x_l = B_{L-1}···B_l, and P_l's smallest non-zero singular value
// σ_min(P_l). One report: one colour per quantity. Two reports (or compare groups): one colour per report, one
// marker and dash per quantity, a two-row legend below. Three or more: one panel per quantity (small multiples),
// the lines styled alike in each and one legend below. Compare reports add the seed band (mean ± std, clipped at
// a tenth of the mean).
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

struct Quantity {
  const Metric* metric;  // its field (block_jacobian | product_jacobian), key and legend text (plot label)
  const char* marker;    // marker and dash when colours mark the reports
};
const Quantity kQuantities[] = {
    {&metrics::kBlockSpectralNorm, "pt 7 dt 1"},
    {&metrics::kProductSpectralNorm, "pt 5 dt 2"},
    {&metrics::kProductMinSingularValue, "pt 9 dt 4"},
};

}  // namespace

Figure plot_jacobian_norms(const std::vector<PlotInput>& in, const PlotOptions& o) {
  for (const auto& i : in)
    require(i.kind != InputKind::Npy, "jacobian-norms reads reports, not '" + i.path + "'; fix: pass analyze or compare --json files");
  const std::vector<std::string> labels = analyze_report_labels(in);
  size_t next_label = 0;
  struct Line {
    std::string label;
    std::vector<std::string> factors;  // what differs (two-way styling)
    const PlotInput* file;
    const PlotJson* layers;  // the per-layer array
  };
  std::vector<Line> lines;
  std::vector<const PlotInput*> reports;
  for (const auto& i : in)
    if (i.kind == InputKind::Analyze) reports.push_back(&i);
  const auto rf = report_factors(reports);
  for (const auto& i : in) {
    if (i.kind == InputKind::Analyze) {
      lines.push_back({labels[next_label], rf[next_label], &i, &i.json[kLayers]});
      ++next_label;
      continue;
    }
    const auto gl = group_labels(i.json);
    const auto gf = group_factors(i.json);
    for (size_t g = 0; g < gl.size(); ++g) {
      std::vector<std::string> f = gf[g];
      if (in.size() > 1) f.insert(f.begin(), i.stem);
      lines.push_back({(in.size() > 1 ? i.stem + ": " : "") + gl[g], f, &i, &i.json[kGroups][g][kPerLayer]});
    }
  }
  // One quantity of one line against l (a compare group: its seed band).
  auto curve = [](const Line& line, const Quantity& qu) {
    Series s;
    const bool analyze = line.file->kind == InputKind::Analyze;
    for (const auto& layer : *line.layers) {
      s.x.push_back(json_number(layer, kIndex));
      if (analyze) {
        s.y.push_back(json_number(layer, qu.metric->field, qu.metric->key));
      } else {
        const Spread sp = json_spread(layer, metric_name(*qu.metric));
        s.y.push_back(sp.mean);
        s.lo.push_back(sp.lo);
        s.hi.push_back(sp.hi);
      }
    }
    return s;
  };
  auto empty = [](const Series& s) { return std::all_of(s.y.begin(), s.y.end(), [](double v) { return std::isnan(v); }); };
  auto base = [&]() {
    LineFigure f;
    f.integer_x = true;
    f.logy = o.logy;
    f.xlabel = "layer {/:Italic l}";
    f.width = o.width;
    return f;
  };

  if (lines.size() <= 2) {  // one panel: one report (a colour per quantity) or two (colour per report, mark per quantity)
    LineFigure f = base();
    f.ylabel = "singular value";
    const bool single = lines.size() == 1;
    int curves = 0;
    for (size_t r = 0; r < lines.size(); ++r)
      for (const Quantity& qu : kQuantities) {
        Series s = curve(lines[r], qu);
        if (empty(s)) continue;
        if (single) s.title = qu.metric->plot, s.enhanced = true;
        else s.style_spec = colour_style(static_cast<int>(r)) + " " + qu.marker;
        f.series.push_back(std::move(s));
        ++curves;
      }
    require(curves > 0, "no Jacobian norms in the inputs; fix: rerun gradflow analyze without --gradients-only");
    if (!single) {  // legend: a coloured line per report, then a grey marker and dash per quantity
      std::vector<std::string> quantities;
      for (const auto& qu : kQuantities) quantities.push_back(qu.metric->plot);
      std::vector<Series> key = two_way_legend({lines[0].label, lines[1].label}, quantities);
      const size_t t_rows = quantities.size();
      for (auto& k : key) {
        for (size_t q = 0; q < 3; ++q)  // the quantities' own markers (kQuantities), enhanced titles
          if (k.title == kQuantities[q].metric->plot) k.style_spec = std::string(kNeutralColour) + " " + kQuantities[q].marker, k.enhanced = true;
        f.series.push_back(std::move(k));
      }
      f.key = "below";
      f.key_rows = static_cast<int>(std::max(t_rows, size_t{1}));
    }
    return line_figure(f);
  }

  // Three or more lines: small multiples, one panel per quantity, the lines styled alike in every panel (colour by
  // one factor and marker and dash by another when two differ, else a style per line) and one legend below.
  std::vector<std::vector<std::string>> factors;
  for (const auto& l : lines) factors.push_back(l.factors);
  const TwoWay t = two_way(factors);
  std::vector<LineFigure> panels;
  for (const Quantity& qu : kQuantities) {
    LineFigure f = base();
    f.ylabel = qu.metric->plot;
    f.key = "none";
    for (size_t r = 0; r < lines.size(); ++r) {
      Series s = curve(lines[r], qu);
      s.style_spec = t.colour.empty() ? series_style(static_cast<int>(r)) : two_way_style(t, r);
      f.series.push_back(std::move(s));
    }
    if (std::all_of(f.series.begin(), f.series.end(), empty)) continue;
    panels.push_back(std::move(f));
  }
  require(!panels.empty(), "no Jacobian norms in the inputs; fix: rerun gradflow analyze without --gradients-only");
  std::vector<std::string> titles;
  for (const auto& line : lines) titles.push_back(line.label);
  const int cols = o.width >= 6 ? 3 : 1;  // a column: panels stacked; a page: side by side
  return panel_figure(std::move(panels), items_legend(t, titles), cols, o.width, cols == 1 ? 1.5 : 1.7,
                      items_legend_rows(t), o.title);
}

}  // namespace gradflow
