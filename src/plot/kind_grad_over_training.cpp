// grad_over_training.cpp — `--kind grad-over-training`: ||dL/dx_l|| (the gradient at block l's input, as analyze
// defines it) against training step. A train report: one line per layer, every layer up to 6, else 6 evenly
// spaced ones (bottom and top included); several train reports: a colour per report, a marker and dash per
// layer; --metric bottom_to_top_grad_ratio: ||dL/dx_0|| / ||dL/dx_{L-1}|| of each report, a line each. Train-sweep reports: small multiples, one panel per (placement, depth), the bottom/top ratio
// ||dL/dx_0|| / ||dL/dx_{L-1}|| of every run against step (colour by lr, marker and dash by warmup; the seeds of
// a cell share its style). Reports of analyze --weights A B ... (a run's checkpoints): over_training_figure.cpp.
// Log y; --logx for the steps (step 0 kept, train_figures.hpp).
#include <algorithm>
#include <cmath>

#include "gradflow/core/error.hpp"
#include "gradflow/plot/kinds.hpp"
#include "gradflow/plot/series.hpp"
#include "gradflow/plot/style.hpp"
#include "gradflow/report/fields.hpp"
#include "train_figures.hpp"

namespace gradflow {
using namespace fields;
namespace {

std::vector<size_t> chosen_layers(size_t L) {
  std::vector<size_t> out;
  if (L <= 6) {
    for (size_t l = 0; l < L; ++l) out.push_back(l);
    return out;
  }
  for (size_t k = 0; k < 6; ++k) {
    const size_t l = (k * (L - 1) + 2) / 5;
    if (out.empty() || out.back() != l) out.push_back(std::min(l, L - 1));
  }
  return out;
}

}  // namespace

Figure plot_grad_over_training(const std::vector<PlotInput>& in, const PlotOptions& o) {
  LineFigure f;
  f.logy = o.logy == "auto" ? "on" : o.logy;
  f.width = o.width;
  const StepAxis step = step_axis(in, o.logx);
  const bool over = std::any_of(in.begin(), in.end(), [](const PlotInput& i) { return i.kind == InputKind::OverTraining; });
  if (over) {  // analyze --weights A B ...: the checkpoints' reports against the step
    for (const auto& i : in)
      require(i.kind == InputKind::OverTraining, "grad-over-training draws train reports or reports over a run's "
                                                 "checkpoints, not both ('" + i.path + "' is a train report); fix: plot "
                                                 "them in two figures");
    return over_training_panels(in, o, step);
  }
  const bool sweeps = std::any_of(in.begin(), in.end(), [](const PlotInput& i) { return i.json.contains(kRuns); });
  if (sweeps) {
    for (const auto& i : in)
      require(i.json.contains(kRuns), "grad-over-training draws train reports or train-sweep reports, not both ('" +
                                          i.path + "' is a train report); fix: plot them in two figures");
    f.ylabel = metrics::kGradRatio.plot;
    return sweep_panels(in, o, f, step, [&](const PlotInput& i, const PlotJson& g) {
      std::vector<CellLine> lines;
      for (const auto& r : i.json[kRuns]) {
        if (r[kPlacement] != g[kPlacement] || r[kLayers] != g[kLayers]) continue;
        CellLine l;
        l.lr = r[kLr].get<double>();
        l.warmup = r[kWarmup].get<long long>();
        for (const auto& e : r[kCurve]) {
          l.series.x.push_back(step.at(e[kStep].get<double>()));
          l.series.y.push_back(json_number(e, kBottomToTopGradRatio));
        }
        lines.push_back(std::move(l));
      }
      return lines;
    });
  }
  const std::vector<std::string> labels = train_report_labels(in);
  if (o.metric == kBottomToTopGradRatio) {  // a line per run: how far the bottom's gradient falls below the top's
    f.ylabel = metrics::kGradRatio.plot;
    for (size_t r = 0; r < in.size(); ++r) {
      Series s;
      s.title = labels[r];
      for (const auto& e : in[r].json[kLog]) {
        s.x.push_back(step.at(e[kStep].get<double>()));
        s.y.push_back(json_number(e, kBottomToTopGradRatio));
      }
      f.series.push_back(std::move(s));
    }
    require(!f.series.empty(), "no gradient record in the inputs; fix: pass gradflow train --json reports");
    apply_step_axis(f, step);
    return line_figure(f);
  }
  require(o.metric.empty(), "--metric " + o.metric + ": grad-over-training of train reports draws ||dL/dx_l|| per "
                            "layer, or with --metric " + kBottomToTopGradRatio + " the bottom/top ratio per run; fix: "
                            "--metric " + kBottomToTopGradRatio + " or no --metric");
  f.ylabel = metrics::kLayerGradNorm.plot;
  std::vector<std::vector<std::string>> factors;  // per line: report, layer
  for (size_t r = 0; r < in.size(); ++r) {
    const auto& log = in[r].json[kLog];
    require(!log.empty(), "'" + in[r].path + "' has an empty log; fix: rerun gradflow train");
    const size_t L = log[0][kLayers].size();
    for (size_t l : chosen_layers(L)) {
      Series s;
      s.title = "layer " + std::to_string(l);
      for (const auto& e : log) {
        s.x.push_back(step.at(e[kStep].get<double>()));
        const auto& v = e[kLayers][l][kGradNorm];
        s.y.push_back(v.is_number() ? v.get<double>() : NAN);
      }
      factors.push_back({labels[r], s.title});
      f.series.push_back(std::move(s));
    }
  }
  require(!f.series.empty(), "no gradient record in the inputs; fix: pass gradflow train or train-sweep --json reports");
  if (labels.size() > 1) {  // a colour per report, a marker and dash per layer
    std::vector<std::string> reports, layers;
    std::vector<int> ci, mi;
    auto level = [](std::vector<std::string>& v, const std::string& x) {
      auto it = std::find(v.begin(), v.end(), x);
      if (it == v.end()) v.push_back(x), it = v.end() - 1;
      return static_cast<int>(it - v.begin());
    };
    for (size_t k = 0; k < f.series.size(); ++k) {
      const int c = level(reports, factors[k][0]), m = level(layers, factors[k][1]);
      f.series[k].title.clear();
      f.series[k].style_spec = colour_style(c) + " " + mark_style(m);
    }
    for (auto& k : two_way_legend(reports, layers)) f.series.push_back(std::move(k));
    const size_t t_rows = std::max(reports.size(), layers.size());
    f.key = "below";
    f.key_rows = static_cast<int>(std::max(t_rows, size_t{1}));
  }
  apply_step_axis(f, step);
  return line_figure(f);
}

}  // namespace gradflow
