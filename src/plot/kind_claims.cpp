// claims.cpp — `--kind claims`: a compact multi-panel figure, one panel per claim experiment (the compare/sweep
// report of a spec in examples/claims/, e.g. `gradflow run examples/claims/c5_bottom_ratio_24.json --json c5.json`)
// showing the claim's metric against the experiment's axis (depth L, or the swept parameter), mean ± std over
// seeds. What each panel shows, first found wins: --metric; the spec's "plot": {"metric", "ratio", "article_value"};
// the built-in choice for the claim id (kClaimPanels); the bottom/top gradient ratio. With "ratio" the panel shows
// the report's paired ratios (placement a / placement b, e.g. Post/Pre). The panel's title is the spec's "claim";
// a dashed line marks the article's value. docs/plotting.md documents the fields.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "gradflow/core/error.hpp"
#include "gradflow/plot/kinds.hpp"
#include "gradflow/plot/style.hpp"
#include "gradflow/report/fields.hpp"
#include "metric_labels.hpp"
#include "sensitivity_series.hpp"

namespace gradflow {
using namespace fields;
namespace {

struct Panel {
  std::string metric;
  bool ratio = false;    // the paired ratios numerator/denominator instead of the groups
  double article = NAN;  // the article's number for this metric, when it gives one
};

// The article's claims (../shared/seed/CLAIMS.md) and the measurement that answers each.
struct ClaimPanel {
  const char* claim;
  Panel panel;
};
const ClaimPanel kClaimPanels[] = {
    {"C4", {metric_name(metrics::kGrowthFactor), false, NAN}},
    // C5: "the bottom-layer gradient of Post-LN is only 1/100 of Pre-LN's"
    {"C5", {metric_name(metrics::kBottomGradNorm), true, 0.01}},
    {"C8", {metric_name(metrics::kGradRatio), false, NAN}},
    {"C9", {metric_name(metrics::kGradRatio), false, NAN}},
    {"Xiong et al. 2020, Theorem 1", {metric_name(metrics::kTopW2GradNorm), false, NAN}},
};

// The spec a report records, with the claim, description and plot of the spec file it came from (reports
// written before `spec` carried them hold them only in spec_file.content).
PlotJson spec_of(const PlotJson& report) {
  PlotJson spec = report.contains(kSpec) && report[kSpec].is_object() ? report[kSpec] : PlotJson::object();
  if (report.contains("spec_file") && report["spec_file"].is_object() && report["spec_file"].contains("content") &&
      report["spec_file"]["content"].is_object())
    for (const char* key : {"claim", "description", "plot"})
      if (!spec.contains(key) && report["spec_file"]["content"].contains(key))
        spec[key] = report["spec_file"]["content"][key];
  return spec;
}

Panel panel_for(const PlotInput& in, const PlotOptions& o) {
  const PlotJson spec = spec_of(in.json);
  Panel p{kDefaultMetric, false, NAN};
  const std::string claim = spec.value("claim", std::string());
  for (const auto& c : kClaimPanels)
    if (claim == c.claim) p = c.panel;
  if (spec.contains("plot") && spec["plot"].is_object()) {
    const PlotJson& q = spec["plot"];
    if (q.contains("metric") && q["metric"].is_string()) p.metric = q["metric"].get<std::string>();
    if (q.contains("ratio") && q["ratio"].is_boolean()) p.ratio = q["ratio"].get<bool>();
    if (q.contains("article_value") && q["article_value"].is_number()) p.article = q["article_value"].get<double>();
  }
  if (!o.metric.empty()) p.metric = o.metric;
  return p;
}

// The paired ratios of `metric` (report["ratios"]: numerator/denominator per depth and value) against depth
// (compare) or the swept value (sweep, x from the groups).
LineFigure ratio_figure(const PlotInput& in, const std::string& metric) {
  const PlotJson& e = in.json;
  require(e.contains(kRatios) && e[kRatios].is_array() && !e[kRatios].empty(),
          in.path + " holds no ratios between placements; fix: run the claim with two placements");
  const bool sweep = e.contains(kParam);
  LineFigure f;
  f.spread = "errorbars";
  f.logy = "on";
  f.integer_x = !sweep;
  f.logx = sweep ? "auto" : "off";  // a sweep over values that span decades (init scale 1 ... 16): log x
  f.xlabel = param_label(sweep ? e[kParam].get<std::string>() : "layers");
  const std::string ml = metric_label(metric);
  f.ylabel = ml.empty() ? metric + " ratio" : "ratio of " + ml;
  std::vector<std::string> order;
  for (const auto& r : e[kRatios]) {
    const std::string key = placement_label(r.value(kNumerator, std::string("?"))) + " / " +
                            placement_label(r.value(kDenominator, std::string("?")));
    auto it = std::find(order.begin(), order.end(), key);
    if (it == order.end()) {
      order.push_back(key);
      f.series.push_back(Series{});
      f.series.back().title = key;
      it = order.end() - 1;
    }
    double x = r.value(kLayers, 0.0);
    if (sweep) {
      x = NAN;
      for (const auto& g : e[kGroups])
        if (g.value(kValue, std::string()) == r.value(kValue, std::string()) && g.contains(kX) && g[kX].is_number())
          x = g[kX].get<double>();
    }
    const auto [mean, sd] = json_stat(r[kMetrics], metric);
    Series& s = f.series[static_cast<size_t>(it - order.begin())];
    s.x.push_back(x);
    s.y.push_back(mean);
    s.lo.push_back(mean > 0 ? std::max(mean - (std::isnan(sd) ? 0 : sd), 0.1 * mean) : mean);
    s.hi.push_back(mean + (std::isnan(sd) ? 0 : sd));
    if (std::isfinite(x) && std::none_of(f.xtics.begin(), f.xtics.end(), [&](const auto& t) { return t.first == x; })) {
      // tics at the depths run, or at the swept values as the sweep names them
      std::string v = sweep ? r.value(kValue, std::string()) : std::to_string(static_cast<long long>(x));
      if (v == "inv-sqrt-2L") v = "1/√(2L)";
      f.xtics.emplace_back(x, v);
    }
  }
  return f;
}

// "CLAIM: stem" on one line when it fits the panel's axes (`inches` wide), else the claim (shortened with "…"
// when even it does not fit) over "(stem)": several specs test one claim, the file tells them apart.
std::string panel_title(const std::string& claim, const std::string& stem, double inches) {
  if (claim.empty()) return stem;
  const size_t fit = static_cast<size_t>(std::max(inches, 0.5) / 0.08);  // a title's characters are ~0.08 in
  auto chars = [](const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  };
  if (chars(claim) + 2 + chars(stem) <= fit) return claim + ": " + stem;
  std::string first = claim;
  if (chars(first) > fit) {
    size_t cut = std::min(first.size(), fit > 1 ? fit - 1 : 1);
    while (cut > 0 && (static_cast<unsigned char>(first[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
    first = first.substr(0, cut) + "…";
  }
  return first + "\n(" + stem + ")";
}

// Whether the report is a --reduced run of its spec: the spec file's "reduced" overrides are the options it ran.
bool reduced_run(const PlotJson& report) {
  if (!report.contains("spec_file") || !report["spec_file"].is_object()) return false;
  const PlotJson& content = report["spec_file"].value("content", PlotJson::object());
  const PlotJson options = spec_of(report).value("options", PlotJson::object());
  if (!content.is_object() || !content.contains("reduced") || !content["reduced"].is_object() ||
      content["reduced"].empty())
    return false;
  for (const auto& [k, v] : content["reduced"].items()) {
    const std::string want = v.is_string() ? v.get<std::string>() : v.dump();
    if (!options.contains(k)) return false;
    const PlotJson& got = options[k];
    if ((got.is_string() ? got.get<std::string>() : got.dump()) != want) return false;
  }
  return true;
}

}  // namespace

Figure plot_claims(const std::vector<PlotInput>& in, const PlotOptions& o) {
  for (const auto& i : in)
    require(i.kind == InputKind::Experiment,
            "claims reads compare/sweep reports, not '" + i.path + "'; fix: pass the --json of `gradflow run examples/claims/...`");
  const int n = static_cast<int>(in.size());
  const int cols = std::max(1, std::min(n, static_cast<int>(o.width / 3.3)));  // panels at least 3.3 in wide
  std::vector<LineFigure> panels;
  for (const auto& i : in) {
    const Panel p = panel_for(i, o);
    LineFigure f = p.ratio ? ratio_figure(i, p.metric) : sensitivity_figure(i, p.metric, "");
    if (o.logy != "auto") f.logy = o.logy;
    const std::string claim = spec_of(i.json).value("claim", std::string());
    // a --reduced run says so in its title: its depths and widths are not the claim's
    const bool reduced = reduced_run(i.json);
    f.title = panel_title(claim, i.stem + (reduced ? ", reduced run" : ""), o.width / cols - 0.93);
    if (std::isfinite(p.article)) {  // the article's number as a dashed line across the panel
      double x0 = INFINITY, x1 = -INFINITY;
      for (const auto& s : f.series)
        for (double x : s.x)
          if (std::isfinite(x)) x0 = std::min(x0, x), x1 = std::max(x1, x);
      if (x0 == x1) x0 -= 0.5, x1 += 0.5;
      Series ref;
      ref.title = "article";
      ref.x = {x0, x1};
      ref.y = {p.article, p.article};
      ref.with = "lines";
      ref.style_spec = std::string(kNeutralColour) + " dt 2 lw 1";
      f.series.push_back(ref);
    }
    panels.push_back(std::move(f));
  }
  // one style per legend entry across the figure (Post-LN the same colour in every panel, whatever order a
  // report lists its placements in): styles in order of first appearance
  std::vector<std::string> seen;
  for (auto& f : panels)
    for (auto& series : f.series) {
      if (series.title.empty() || !series.style_spec.empty()) continue;
      auto it = std::find(seen.begin(), seen.end(), series.title);
      if (it == seen.end()) it = seen.insert(seen.end(), series.title);
      series.style_spec = series_style(static_cast<int>(it - seen.begin()));
    }
  return panel_figure(std::move(panels), {}, cols, o.width, 1.8, 0, o.title);
}

}  // namespace gradflow
