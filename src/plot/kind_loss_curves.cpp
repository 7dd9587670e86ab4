// loss_curves.cpp — `--kind loss-curves`: train and eval loss against step (docs/training.md). A train report
// gives two lines (eval solid, train dashed, same colour); a train-sweep report one line per cell (placement,
// depth, lr, warmup): its mean eval curve over seeds. --logx draws the step axis in log scale (step 0 dropped).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gradflow/core/error.hpp"
#include "gradflow/plot/kinds.hpp"
#include "gradflow/plot/series.hpp"
#include "gradflow/report/fields.hpp"

namespace gradflow {
using namespace fields;

Figure plot_loss_curves(const std::vector<PlotInput>& in, const PlotOptions& o) {
  LineFigure f;
  f.logy = o.logy;
  f.logx = o.logx;
  f.xlabel = "step";
  f.ylabel = "loss (nats per target token)";
  f.ylabel_plain = true;
  const bool logx = o.logx == "on";
  const std::vector<std::string> labels = train_report_labels(in);
  size_t next = 0;
  int style = 0;
  for (const auto& i : in) {
    if (i.json.contains(kLog)) {
      const std::string label = labels[next++];
      ++style;
      Series ev, tr;
      ev.title = label + " eval";
      tr.title = label + " train";
      ev.style = tr.style = (style - 1) % 8 + 1;
      tr.style_spec = "lt " + std::to_string(tr.style) + " dt 2";
      for (const auto& e : i.json[kLog]) {
        const double s = e[kStep].get<double>();
        if (logx && !(s > 0)) continue;
        ev.x.push_back(s);
        ev.y.push_back(json_number(e, kEvalLoss));
        tr.x.push_back(s);
        tr.y.push_back(json_number(e, kTrainLoss));
      }
      f.series.push_back(std::move(ev));
      f.series.push_back(std::move(tr));
      continue;
    }
    for (const auto& g : i.json[kGroups])
      for (const auto& c : g[kCells]) {
        Series s;
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s L=%lld lr=%g w=%lld", g[kPlacement].get<std::string>().c_str(),
                      g[kLayers].get<long long>(), c[kLr].get<double>(), c[kWarmup].get<long long>());
        s.title = (in.size() > 1 ? i.stem + ": " : "") + buf;
        for (const auto& p : c[kMeanEvalCurve]) {
          const double st = p[0].get<double>();
          if (logx && !(st > 0)) continue;
          s.x.push_back(st);
          s.y.push_back(p[1].is_number() ? p[1].get<double>() : NAN);
        }
        f.series.push_back(std::move(s));
      }
  }
  require(!f.series.empty(), "no loss curve in the inputs; fix: pass gradflow train or train-sweep --json reports");
  if (!logx) f.extra += round_xtics(f.series);
  return line_figure(f);
}

}  // namespace gradflow
