// grad_by_depth.cpp — `--kind grad-by-depth`: ||dL/dx_l|| against layer l (x_l the input of block l, l = 0 the
// network input), or ||dL/dW|| of one parameter (--param linear2.weight) of block l; log y. Analyze reports
// give one line each; compare reports one line per (placement, depth) group with a band mean ± std over seeds
// (clipped at a tenth of the mean so it stays on the log axis). A two-stream report (resi-dual) adds each stream's
// line, ‖dL/dx_a,l‖ and ‖dL/dx_d,l‖, beside the pair's.
#include <algorithm>
#include <cmath>

#include "gradflow/core/error.hpp"
#include "gradflow/plot/kinds.hpp"
#include "gradflow/plot/series.hpp"
#include "gradflow/report/fields.hpp"

namespace gradflow {
using namespace fields;
namespace {

std::string param_names(const PlotJson& layer) {
  std::string s;
  if (layer.contains(kParamGradNorms))
    for (const auto& [k, v] : layer[kParamGradNorms].items()) s += (s.empty() ? "" : ", ") + k;
  return s;
}

// The legend's suffix of a two-stream scheme's per-stream line.
std::string stream_suffix(const char* field) {
  return std::string(field) == kGradNormStreamA ? " (x_a)" : " (x_d)";
}

// A compare group's line: the mean of `metric` over seeds per layer, with a band of its confidence interval
// (json_spread: clipped at a tenth of the mean so it stays on the log axis).
Series group_series(const PlotJson& per_layer, const std::string& metric, const std::string& title) {
  Series s;
  s.title = title;
  for (const auto& layer : per_layer) {
    const Spread sp = json_spread(layer, metric);
    s.x.push_back(json_number(layer, kIndex));
    s.y.push_back(sp.mean);
    s.lo.push_back(sp.lo);
    s.hi.push_back(sp.hi);
  }
  return s;
}

}  // namespace

Figure plot_grad_by_depth(const std::vector<PlotInput>& in, const PlotOptions& o) {
  LineFigure f;
  f.integer_x = true;
  f.point_interval = 0;  // deep models (L = 96): a marker every few layers, shallower lines visible under them
  f.logy = o.logy == "auto" ? "on" : o.logy;
  f.xlabel = "layer {/:Italic l}";
  f.ylabel = o.param.empty() ? metrics::kLayerGradNorm.plot : "‖∂{/:Italic L}/∂{/:Italic W}‖  (" + o.param + ")";
  for (const auto& i : in)
    require(i.kind != InputKind::Npy, "grad-by-depth reads reports, not '" + i.path + "'; fix: pass analyze or compare --json files");
  f.width = o.width;
  const std::vector<std::string> labels = analyze_report_labels(in);
  std::vector<std::vector<std::string>> factors;  // of each series: what the legend names (two-way styling)
  {
    std::vector<const PlotInput*> reports;
    for (const auto& i : in)
      if (i.kind == InputKind::Analyze) reports.push_back(&i);
    factors = report_factors(reports);
  }
  size_t next_label = 0;
  const bool many_files = in.size() > 1;
  for (const auto& i : in) {
    if (i.kind == InputKind::Analyze) {
      Series s;
      s.title = labels[next_label++];
      for (const auto& layer : i.json[kLayers]) {
        double y = json_number(layer, kGradNorm);
        if (!o.param.empty()) {
          y = json_number(layer, kParamGradNorms, o.param);
          require(!std::isnan(y), "--param '" + o.param + "' is not in " + i.path + "; fix: use one of " + param_names(layer));
        }
        s.x.push_back(json_number(layer, kIndex));
        s.y.push_back(y);
      }
      const bool streams = o.param.empty() && !i.json[kLayers].empty() && i.json[kLayers][0].contains(kGradNormStreamA);
      const std::string base = s.title;
      if (streams) s.title += " (pair)";
      f.series.push_back(std::move(s));
      if (streams)
        for (const char* k : {kGradNormStreamA, kGradNormStreamD}) {
          Series st;
          st.title = base + stream_suffix(k);
          for (const auto& layer : i.json[kLayers]) {
            st.x.push_back(json_number(layer, kIndex));
            st.y.push_back(json_number(layer, k));
          }
          f.series.push_back(std::move(st));
        }
      continue;
    }
    const std::string metric = o.param.empty() ? std::string(kGradNorm) : kParamGradNorms + ("." + o.param);
    const std::vector<std::string> glabels = group_labels(i.json);
    for (auto gf : group_factors(i.json)) {
      if (many_files) gf.insert(gf.begin(), i.stem);
      factors.push_back(gf);
    }
    for (size_t g = 0; g < i.json[kGroups].size(); ++g) {
      const auto& group = i.json[kGroups][g];
      const std::string title = (many_files ? i.stem + ": " : "") + glabels[g];
      Series s = group_series(group[kPerLayer], metric, title);
      if (f.extra.find(kSpreadNote) == std::string::npos) f.extra += kSpreadNote;  // a compare group's band
      const bool any = std::any_of(s.y.begin(), s.y.end(), [](double v) { return !std::isnan(v); });
      require(any, "'" + metric + "' is not in " + i.path + "; fix: check --param against the report's per_layer metrics");
      const bool streams = o.param.empty() && !group[kPerLayer].empty() && group[kPerLayer][0].contains(kGradNormStreamA);
      if (streams) s.title += " (pair)";
      f.series.push_back(std::move(s));
      if (streams)
        for (const char* k : {kGradNormStreamA, kGradNormStreamD})
          f.series.push_back(group_series(group[kPerLayer], k, title + stream_suffix(k)));
    }
  }
  // Many lines that differ in two factors (placement x depth, placement x init scale): colour by the first,
  // marker and dash by the second, a two-row legend below the axes.
  const TwoWay t = factors.size() == f.series.size() && f.series.size() >= 4 ? two_way(factors) : TwoWay{};
  if (!t.colour.empty()) {
    for (size_t k = 0; k < f.series.size(); ++k) f.series[k].title.clear(), f.series[k].style_spec = two_way_style(t, k);
    for (auto& k : two_way_legend(t.colours, t.marks)) f.series.push_back(std::move(k));
    const size_t t_rows = std::max(t.colours.size(), t.marks.size());
    f.key = "below";
    f.key_rows = static_cast<int>(std::max(t_rows, size_t{1}));
  }
  return line_figure(f);
}

}  // namespace gradflow
