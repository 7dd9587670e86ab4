// claims.cpp — `--kind claims`: a compact multi-panel figure, one panel per claim experiment (the compare/sweep
// report of a spec in examples/claims/, e.g. `gradflow run examples/claims/c5_bottom_ratio_24.json --json c5.json`)
// showing the claim's metric against the experiment's axis (depth L, or the swept parameter), mean ± std over
// seeds. What each panel shows, first found wins: --metric; the spec's "plot": {"metric" | "metrics" + "labels",
// "x", "ratio", "article_value", "ylabel"}; the built-in choice for the claim id (kClaimPanels); the bottom/top
// gradient ratio. With "ratio" the panel shows the report's paired ratios (placement a / placement b, e.g.
// Post/Pre); with "metrics" a line per group and metric (an estimate beside what it estimates); with "x": "layer"
// the per-layer profile of the deepest groups (a claim about depth l inside one model, not about L). The panel's
// title is the spec's "claim"; a dashed grey line marks the article's value, grey lines the bounds a theorem gives.
// docs/plotting.md documents the fields.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "gradflow/core/error.hpp"
#include "gradflow/core/utf8.hpp"
#include "gradflow/plot/kinds.hpp"
#include "gradflow/plot/style.hpp"
#include "gradflow/report/fields.hpp"
#include "metric_labels.hpp"
#include "sensitivity_series.hpp"

namespace gradflow {
using namespace fields;
namespace {

struct Panel {
  std::vector<std::string> metrics;  // one, or several drawn side by side (named by `labels` in the legend)
  std::vector<std::string> labels;
  bool ratio = false;      // the paired ratios numerator/denominator instead of the groups
  bool per_layer = false;  // against layer l of the deepest groups, not against depth L or the swept value
  double article = NAN;    // the article's number for this metric, when it gives one
  std::string ylabel;      // the axis label of several metrics (plain text)
};

// The article's claims (../shared/seed/CLAIMS.md) and the measurement that answers each.
struct ClaimPanel {
  const char* claim;
  Panel panel;
};
const ClaimPanel kClaimPanels[] = {
    {"C4", {{metric_name(metrics::kGrowthFactor)}, {}, false, false, NAN, ""}},
    // C5: "the bottom-layer gradient of Post-LN is only 1/100 of Pre-LN's"
    {"C5", {{metric_name(metrics::kBottomGradNorm)}, {}, true, false, 0.01, ""}},
    {"C8", {{metric_name(metrics::kGradRatio)}, {}, false, false, NAN, ""}},
    {"C9", {{metric_name(metrics::kGradRatio)}, {}, false, false, NAN, ""}},
    {"Xiong et al. 2020, Theorem 1", {{metric_name(metrics::kTopW2GradNorm)}, {}, false, false, NAN, ""}},
};

// Xiong et al. 2020, Lemma 2, for Pre-LN: (1 + l/2) d <= E||x_l||^2 <= (1 + 3l/2) d per token, i.e. the RMS of
// x_l between sqrt(1 + l/2) and sqrt(1 + 3l/2) (docs/findings.md compares them with activation_rms^2).
const char* const kLemma2Claim = "Xiong et al. 2020, Lemma 2";

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

std::vector<std::string> strings_of(const PlotJson& j) {
  std::vector<std::string> v;
  if (j.is_array())
    for (const auto& e : j)
      if (e.is_string()) v.push_back(e.get<std::string>());
  return v;
}

Panel panel_for(const PlotInput& in, const PlotOptions& o) {
  const PlotJson spec = spec_of(in.json);
  Panel p{{kDefaultMetric}, {}, false, false, NAN, ""};
  const std::string claim = spec.value("claim", std::string());
  for (const auto& c : kClaimPanels)
    if (claim == c.claim) p = c.panel;
  if (spec.contains("plot") && spec["plot"].is_object()) {
    const PlotJson& q = spec["plot"];
    if (q.contains("metric") && q["metric"].is_string()) p.metrics = {q["metric"].get<std::string>()};
    if (q.contains("metrics") && !strings_of(q["metrics"]).empty()) p.metrics = strings_of(q["metrics"]);
    if (q.contains("labels")) p.labels = strings_of(q["labels"]);
    if (q.contains("ratio") && q["ratio"].is_boolean()) p.ratio = q["ratio"].get<bool>();
    if (q.contains("x") && q["x"].is_string()) p.per_layer = q["x"].get<std::string>() == "layer";
    if (q.contains("article_value") && q["article_value"].is_number()) p.article = q["article_value"].get<double>();
    if (q.contains("ylabel") && q["ylabel"].is_string()) p.ylabel = q["ylabel"].get<std::string>();
  }
  if (!o.metric.empty()) p.metrics = {o.metric}, p.labels.clear();
  require(p.labels.empty() || p.labels.size() == p.metrics.size(),
          in.path + ": its spec's plot names " + std::to_string(p.labels.size()) + " labels for " +
              std::to_string(p.metrics.size()) + " metrics; fix: one label per metric in \"plot\"");
  return p;
}

// The largest depth among the report's groups: a per-layer panel draws the groups of that depth.
long long deepest_layers(const PlotJson& report) {
  long long deepest = 0;
  for (const auto& g : report[kGroups]) deepest = std::max(deepest, g.value(kLayers, 0LL));
  return deepest;
}

// Whether group g is drawn on a per-layer panel: of the deepest L, and holding its per-layer metrics.
bool drawn_per_layer(const PlotJson& report, size_t g, long long deepest) {
  const PlotJson& group = report[kGroups][g];
  return group.value(kLayers, 0LL) == deepest && group.contains(kPerLayer);
}

// The per-layer profile of `metric` (per_layer[l].<metric>, mean ± std over seeds) of each group at the deepest L
// of the report: a line per group against layer l.
LineFigure layer_figure(const PlotInput& in, const std::string& metric) {
  const PlotJson& groups = in.json[kGroups];
  const long long deepest = deepest_layers(in.json);
  const std::vector<std::string> labels = group_labels(in.json);
  LineFigure f;
  f.spread = "errorbars";
  f.extra += kSpreadNote;
  f.integer_x = true;
  f.point_interval = 0;
  f.xlabel = "layer {/:Italic l}  ({/:Italic L} = " + std::to_string(deepest) + ")";
  f.ylabel = metric_label(metric);
  if (f.ylabel.empty()) f.ylabel = metric, f.ylabel_plain = true;
  bool any = false;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (!drawn_per_layer(in.json, g, deepest)) continue;
    Series s;
    s.title = labels[g];
    for (const auto& layer : groups[g][kPerLayer]) {
      const Spread sp = json_spread(layer, metric);
      any |= !std::isnan(sp.mean);
      s.x.push_back(json_number(layer, kIndex));
      s.y.push_back(sp.mean);
      s.lo.push_back(sp.lo);
      s.hi.push_back(sp.hi);
    }
    f.series.push_back(std::move(s));
  }
  require(any, "'" + metric + "' is not a per-layer metric of " + in.path +
                   "; fix: name one of per_layer's fields (grad_norm, activation_rms, ...) in the spec's \"plot\"");
  return f;
}

// Lemma 2's bounds on the RMS of Pre-LN's x_l over layers 0 ... L-1, two grey lines under one legend entry.
void add_lemma2_bounds(LineFigure& f) {
  double top = 0;
  for (const auto& s : f.series)
    for (double x : s.x)
      if (std::isfinite(x)) top = std::max(top, x);
  Series b;  // one series, the lower bound then the upper, apart where a NaN point breaks the line
  b.title = "Lemma 2 bounds, Pre-LN";
  for (double k : {0.5, 1.5}) {
    if (!b.x.empty()) b.x.push_back(NAN), b.y.push_back(NAN);
    for (int l = 0; l <= static_cast<int>(top); ++l) b.x.push_back(l), b.y.push_back(std::sqrt(1 + k * l));
  }
  b.with = "lines";
  b.style_spec = std::string(kNeutralColour) + " dt 3 lw 1";
  f.series.push_back(std::move(b));
}

// A series' place in the figure's styles: the group it draws (its colour, the same in every panel) and which of
// the panel's metrics (its marker and dash; 0 also for a panel of one metric).
struct StyleKey {
  std::string group;
  int metric = 0;
};

// The panel of one report: its metrics (a line per group and metric) against depth, the swept value or layer;
// `keys` gets each series' StyleKey.
LineFigure metrics_figure(const PlotInput& in, const Panel& p, std::vector<StyleKey>& keys) {
  // a per-layer panel's groups (layer_figure's lines, in its order) differ by placement and by what the sweep
  // varies: colour by the placement, marker and dash by the rest (with and without the final norm)
  std::vector<StyleKey> group_keys;
  if (p.per_layer) {
    std::vector<std::string> variants;
    const auto factors = group_factors(in.json);
    const long long deepest = deepest_layers(in.json);
    for (size_t g = 0; g < factors.size(); ++g) {
      if (!drawn_per_layer(in.json, g, deepest)) continue;
      std::string rest;
      for (size_t k = 1; k < factors[g].size(); ++k) rest += factors[g][k] + ";";
      auto it = std::find(variants.begin(), variants.end(), rest);
      if (it == variants.end()) it = variants.insert(variants.end(), rest);
      group_keys.push_back({factors[g].front(), static_cast<int>(it - variants.begin())});
    }
  }
  const int per_metric = static_cast<int>(group_keys.size());  // each further metric's marks come after these
  LineFigure f;
  for (size_t m = 0; m < p.metrics.size(); ++m) {
    LineFigure one = p.per_layer ? layer_figure(in, p.metrics[m]) : sensitivity_figure(in, p.metrics[m], "");
    for (size_t j = 0; j < one.series.size(); ++j) {
      Series& s = one.series[j];
      keys.push_back(j < group_keys.size()
                         ? StyleKey{group_keys[j].group, group_keys[j].metric + static_cast<int>(m) * per_metric}
                         : StyleKey{s.title, static_cast<int>(m)});
      if (p.metrics.size() > 1) s.title += ", " + (p.labels.empty() ? p.metrics[m] : p.labels[m]);
    }
    if (m == 0) {
      f = std::move(one);
      continue;
    }
    for (auto& s : one.series) f.series.push_back(std::move(s));
  }
  if (p.metrics.size() > 1) f.ylabel = p.ylabel.empty() ? "value" : p.ylabel, f.ylabel_plain = true;
  if (p.metrics.size() > 1 || p.per_layer) f.key = "below";  // long names, lines across the whole panel
  return f;
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
  f.extra += kSpreadNote;
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
    const Spread sp = json_spread(r[kMetrics], metric);
    Series& s = f.series[static_cast<size_t>(it - order.begin())];
    s.x.push_back(x);
    s.y.push_back(sp.mean);
    s.lo.push_back(sp.lo);
    s.hi.push_back(sp.hi);
    if (std::isfinite(x) && std::none_of(f.xtics.begin(), f.xtics.end(), [&](const auto& t) { return t.first == x; })) {
      // tics at the depths run, or at the swept values as the sweep names them
      std::string v = sweep ? r.value(kValue, std::string()) : std::to_string(static_cast<long long>(x));
      if (v == "inv-sqrt-2L") v = "1/√(2L)";
      f.xtics.emplace_back(x, v);
    }
  }
  return f;
}

// "CLAIM: stem" on one line when it fits the panel's axes (`inches` wide), else the claim in at most three lines
// (the third shortened with "…" only when even three do not hold it) over "(stem)": several specs test one claim,
// the file tells them apart.
std::string panel_title(const std::string& claim, const std::string& stem, double inches) {
  if (claim.empty()) return stem;
  const double width = std::max(inches, 0.5);
  const size_t fit = static_cast<size_t>(width / 0.08);  // a title's characters are ~0.08 in
  if (utf8_length(claim) + 2 + utf8_length(stem) <= fit) return claim + ": " + stem;
  std::vector<std::string> lines = title_lines(claim, width);
  if (lines.size() > 3) {
    std::string last = lines[2];
    for (size_t k = 3; k < lines.size(); ++k) last += " " + lines[k];
    size_t cut = std::min(last.size(), fit > 1 ? fit - 1 : 1);
    while (cut > 0 && !utf8_starts(last, cut)) --cut;  // not inside a character
    lines = {lines[0], lines[1], last.substr(0, cut) + "…"};
  }
  std::string title;
  for (const auto& l : lines) title += l + "\n";
  return title + "(" + stem + ")";
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
  std::vector<std::vector<StyleKey>> keys;  // per panel, per series drawn from the report
  for (const auto& i : in) {
    const Panel p = panel_for(i, o);
    const std::string claim = spec_of(i.json).value("claim", std::string());
    keys.emplace_back();
    LineFigure f = p.ratio ? ratio_figure(i, p.metrics.front()) : metrics_figure(i, p, keys.back());
    if (p.ratio)
      for (const auto& s : f.series) keys.back().push_back({s.title, 0});
    if (claim == kLemma2Claim && p.per_layer && p.metrics == std::vector<std::string>{kActivationRms})
      add_lemma2_bounds(f);
    if (o.logy != "auto") f.logy = o.logy;
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
  // by group; a panel of several metrics gives a group's further metrics its colour with another marker and dash
  std::vector<std::string> seen;
  for (size_t k = 0; k < panels.size(); ++k)
    for (size_t j = 0; j < panels[k].series.size() && j < keys[k].size(); ++j) {
      Series& series = panels[k].series[j];
      if (series.title.empty() || !series.style_spec.empty()) continue;
      auto it = std::find(seen.begin(), seen.end(), keys[k][j].group);
      if (it == seen.end()) it = seen.insert(seen.end(), keys[k][j].group);
      const int c = static_cast<int>(it - seen.begin()), m = keys[k][j].metric;
      series.style_spec = m == 0 ? series_style(c) : colour_style(c) + " " + mark_style(c + m);
    }
  return panel_figure(std::move(panels), {}, cols, o.width, 1.8, 0, o.title);
}

}  // namespace gradflow
