// loss_curves.cpp — `--kind loss-curves`: train and eval loss against step (docs/training.md). Train reports:
// one colour per run, eval a solid line with markers, train a dashed line (a legend of the runs' colours and of
// the two line styles). Train-sweep reports: small multiples, one panel per (placement, depth), one mean eval
// curve over seeds per (lr, warmup) cell (colour by lr, marker and dash by warmup). --logx draws the step axis
// in log scale, step 0 included (train_figures.hpp).
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

Figure plot_loss_curves(const std::vector<PlotInput>& in, const PlotOptions& o) {
  LineFigure f;
  f.logy = o.logy;
  f.ylabel = "loss (nats per target token)";
  f.ylabel_plain = true;
  f.width = o.width;
  const StepAxis step = step_axis(in, o.logx);
  const bool sweeps = std::any_of(in.begin(), in.end(), [](const PlotInput& i) { return i.json.contains(kRuns); });
  if (sweeps) {
    for (const auto& i : in)
      require(i.json.contains(kRuns), "loss-curves draws train reports or train-sweep reports, not both ('" + i.path +
                                          "' is a train report); fix: plot them in two figures");
    f.ylabel = "mean eval loss (nats)";  // short: a panel's axis is about 1.3 in tall
    return sweep_panels(in, o, f, step, [&](const PlotInput&, const PlotJson& g) {
      std::vector<CellLine> lines;
      for (const auto& c : g[kCells]) {
        CellLine l;
        l.lr = c[kLr].get<double>();
        l.warmup = c[kWarmup].get<long long>();
        for (const auto& p : c[kMeanEvalCurve]) {
          l.series.x.push_back(step.at(p[0].get<double>()));
          l.series.y.push_back(p[1].is_number() ? p[1].get<double>() : NAN);
        }
        lines.push_back(std::move(l));
      }
      return lines;
    });
  }
  const std::vector<std::string> labels = train_report_labels(in);
  const bool one = labels.size() == 1;
  size_t r = 0;
  for (const auto& i : in) {
    Series ev, tr;
    ev.style_spec = colour_style(static_cast<int>(r)) + " pt 7 dt 1";  // eval: solid with markers
    tr.style_spec = colour_style(static_cast<int>(r)) + " dt 2";       // train: dashed, no markers
    tr.with = "lines";
    if (one) ev.title = "eval", tr.title = "train";
    for (const auto& e : i.json[kLog]) {
      const double s = step.at(e[kStep].get<double>());
      ev.x.push_back(s);
      ev.y.push_back(json_number(e, kEvalLoss));
      tr.x.push_back(s);
      tr.y.push_back(json_number(e, kTrainLoss));
    }
    f.series.push_back(std::move(ev));
    f.series.push_back(std::move(tr));
    ++r;
  }
  require(!f.series.empty(), "no loss curve in the inputs; fix: pass gradflow train or train-sweep --json reports");
  if (!one) {  // a colour per run, then the two line styles in grey
    std::vector<Series> key = two_way_legend(labels, {"eval", "train"});
    const size_t t_rows = std::max(labels.size(), size_t{2});
    for (auto& k : key) {
      const bool mark = k.style_spec.rfind(kNeutralColour, 0) == 0;  // the second column's samples
      if (k.title == "eval" && mark) k.style_spec = std::string(kNeutralColour) + " pt 7 dt 1";
      if (k.title == "train" && mark) k.style_spec = std::string(kNeutralColour) + " dt 2", k.with = "lines";
      f.series.push_back(std::move(k));
    }
    f.key = "below";
    f.key_rows = static_cast<int>(std::max(t_rows, size_t{1}));
  }
  apply_step_axis(f, step);
  return line_figure(f);
}

}  // namespace gradflow
