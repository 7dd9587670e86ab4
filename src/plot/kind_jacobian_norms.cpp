// jacobian_norms.cpp — `--kind jacobian-norms`: against layer l, the spectral norm of the block Jacobian
// B_l = ∂x_{l+1}/∂x_l, of the product P_l = ∂y/∂x_l = B_{L-1}···B_l, and P_l's smallest non-zero singular value
// σ_min(P_l). One report: one colour per quantity. Several reports (or compare groups): one colour per report,
// one marker and dash per quantity, and a legend of colours and markers. Compare reports add the seed band
// (mean ± std, clipped at a tenth of the mean).
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
  LineFigure f;
  f.integer_x = true;
  f.logy = o.logy;
  f.xlabel = "layer {/:Italic l}";
  f.ylabel = "singular value";
  for (const auto& i : in)
    require(i.kind != InputKind::Npy, "jacobian-norms reads reports, not '" + i.path + "'; fix: pass analyze or compare --json files");
  const std::vector<std::string> labels = analyze_report_labels(in);
  size_t next_label = 0;
  int curves = 0;
  std::vector<std::pair<std::string, std::pair<const PlotInput*, const PlotJson*>>> lines;  // (label, (file, per-layer array))
  for (const auto& i : in) {
    if (i.kind == InputKind::Analyze) lines.push_back({labels[next_label++], {&i, &i.json[kLayers]}});
    else {
      const auto gl = group_labels(i.json);
      for (size_t g = 0; g < gl.size(); ++g)
        lines.push_back({(in.size() > 1 ? i.stem + ": " : "") + gl[g], {&i, &i.json[kGroups][g][kPerLayer]}});
    }
  }
  const bool single = lines.size() == 1;
  for (size_t r = 0; r < lines.size(); ++r) {
    const auto& [label, where] = lines[r];
    const bool analyze = where.first->kind == InputKind::Analyze;
    for (size_t q = 0; q < 3; ++q) {
      const Quantity& qu = kQuantities[q];
      Series s;
      if (single) s.title = qu.metric->plot, s.enhanced = true;
      else s.style_spec = "lt " + std::to_string(r % kStyles + 1) + " " + qu.marker;
      for (const auto& layer : *where.second) {
        s.x.push_back(json_number(layer, kIndex));
        if (analyze) {
          s.y.push_back(json_number(layer, qu.metric->field, qu.metric->key));
        } else {
          const auto [mean, sd] = json_stat(layer, metric_name(*qu.metric));
          s.y.push_back(mean);
          s.lo.push_back(std::max(mean - (std::isnan(sd) ? 0 : sd), 0.1 * mean));
          s.hi.push_back(mean + (std::isnan(sd) ? 0 : sd));
        }
      }
      if (std::all_of(s.y.begin(), s.y.end(), [](double v) { return std::isnan(v); })) continue;
      f.series.push_back(std::move(s));
      ++curves;
    }
  }
  if (!single) {  // legend: a coloured line per report, then a black marker per quantity
    for (size_t r = 0; r < lines.size(); ++r) {
      Series k;
      k.key_only = true;
      k.title = lines[r].first;
      k.style_spec = "lt " + std::to_string(r % kStyles + 1) + " pt -1 dt 1";
      f.series.push_back(k);
    }
    for (const auto& qu : kQuantities) {
      Series k;
      k.key_only = true, k.enhanced = true;
      k.title = qu.metric->plot;
      k.style_spec = std::string("lt 7 ") + qu.marker;
      f.series.push_back(k);
    }
  }
  require(curves > 0, "no Jacobian norms in the inputs; fix: rerun gradflow analyze without --gradients-only");
  return line_figure(f);
}

}  // namespace gradflow
