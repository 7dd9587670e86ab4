// kind_lr_transfer.cpp — `--kind lr-transfer`: learning-rate transfer from train-sweep reports (train/sweep.hpp):
// one panel per placement, the mean final eval loss over seeds against the learning rate (log axis), one line per
// model size — each depth and width of a report (train-sweep --d-model 32,64,128), and each report (a sweep per
// --d-model) — and each line's fitted optimum
// (optimal_lr: the parabola vertex in log2 lr, mean over seeds) marked by a star on the line's colour at the
// lowest loss of that line. One warmup: a sweep of several warmups is refused (draw it with phase-diagram).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "gradflow/core/error.hpp"
#include "gradflow/plot/kinds.hpp"
#include "gradflow/plot/series.hpp"
#include "gradflow/plot/style.hpp"

namespace gradflow {

Figure plot_lr_transfer(const std::vector<PlotInput>& in, const PlotOptions& o) {
  std::set<long long> warmups;
  for (const auto& i : in) {
    require(i.kind == InputKind::Train && i.json.contains("runs") && i.json.contains("grid"),
            "lr-transfer draws train-sweep reports, not '" + i.path + "'; fix: pass the --json of gradflow train-sweep "
            "runs (one per width, or one over --layers)");
    for (const auto& w : i.json["grid"]["warmup"]) warmups.insert(w.get<long long>());
  }
  require(warmups.size() == 1, "lr-transfer draws one warmup, the inputs have " + std::to_string(warmups.size()) +
                                   "; fix: sweep one --warmup value, or draw the grid with --kind phase-diagram");
  const std::string w = std::to_string(*warmups.begin());
  struct Line {
    long long d, L;
    Series loss, best;
  };
  std::map<std::string, std::map<std::pair<long long, long long>, Line>> by_placement;  // placement -> (d, L) -> line
  std::vector<std::string> order;
  for (const auto& i : in) {
    const long long report_d = i.json["config"].value("d_model", 0LL);
    for (const auto& g : i.json["groups"]) {
      const long long d = g.value("d_model", report_d);  // a group's own width when the sweep has a width axis
      const std::string p = g["placement"].get<std::string>();
      if (std::find(order.begin(), order.end(), p) == order.end()) order.push_back(p);
      const long long L = g["layers"].get<long long>();
      Line& line = by_placement[p][{d, L}];
      require(line.loss.x.empty(), "lr-transfer: two inputs hold placement " + p + " at d = " + std::to_string(d) +
                                       ", L = " + std::to_string(L) + "; fix: pass one report per size");
      line.d = d;
      line.L = L;
      double lowest = NAN;
      for (const auto& c : g["cells"]) {
        const double y = c["final_eval_loss_mean"].is_number() ? c["final_eval_loss_mean"].get<double>() : NAN;
        line.loss.x.push_back(c["lr"].get<double>());
        line.loss.y.push_back(y);
        if (std::isfinite(y) && !(y >= lowest)) lowest = y;
      }
      const auto& opt = g["optimal_lr"][w];
      if (opt.is_object() && opt["lr"].is_number() && std::isfinite(lowest)) {
        line.best.x.push_back(opt["lr"].get<double>());
        line.best.y.push_back(lowest);
      }
    }
  }
  require(!by_placement.empty(), "the train-sweep reports hold no groups; fix: rerun gradflow train-sweep");
  // one style per size across the panels
  std::set<std::pair<long long, long long>> sizes;
  for (const auto& [p, lines] : by_placement)
    for (const auto& [key, l] : lines) sizes.insert(key);
  std::set<long long> ds, Ls;
  for (const auto& k : sizes) {
    ds.insert(k.first);
    Ls.insert(k.second);
  }
  const bool widths = ds.size() > 1, depths = Ls.size() > 1;
  const auto label = [&](const std::pair<long long, long long>& k) {
    std::string t;
    if (widths || !depths) t = "d = " + std::to_string(k.first);
    if (depths) t += std::string(t.empty() ? "" : ", ") + "L = " + std::to_string(k.second);
    return t;
  };
  std::vector<LineFigure> panels;
  for (const auto& p : order) {
    LineFigure f;
    f.logx = "on";
    f.logy = o.logy;
    f.xlabel = "learning rate";
    f.ylabel = "final eval loss";
    f.ylabel_plain = true;
    f.key = "none";
    f.title = placement_label(p);
    int k = 0;
    for (const auto& s : sizes) {
      const auto it = by_placement[p].find(s);
      if (it != by_placement[p].end()) {
        Series loss = it->second.loss, best = it->second.best;
        loss.style_spec = series_style(k);
        loss.title = label(s);
        best.style_spec = colour_style(k) + " pt 3 ps 2";
        best.with = "points";
        f.series.push_back(std::move(loss));
        if (!best.x.empty()) f.series.push_back(std::move(best));
      }
      ++k;
    }
    panels.push_back(std::move(f));
  }
  std::vector<Series> legend;
  int k = 0;
  for (const auto& s : sizes) {
    Series e;
    e.key_only = true;
    e.title = label(s);
    e.style_spec = series_style(k++);
    legend.push_back(std::move(e));
  }
  Series star;
  star.key_only = true;
  star.title = "fitted optimum";
  star.style_spec = std::string(kNeutralColour) + " pt 3 ps 2";
  star.with = "points";
  legend.push_back(std::move(star));
  const int cols = o.width >= 6 ? 3 : 1;
  return panel_figure(std::move(panels), legend, cols, o.width, cols == 1 ? 1.6 : 1.7, 0, o.title);
}

}  // namespace gradflow
