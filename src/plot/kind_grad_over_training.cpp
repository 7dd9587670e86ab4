// grad_over_training.cpp — `--kind grad-over-training`: ||dL/dx_l|| (the gradient at block l's input, as analyze
// defines it) against training step, one line per layer: every layer up to 6, else 6 evenly spaced ones (bottom
// and top included). Train-sweep reports: the bottom and top layer of each run. Log y; --logx for the steps.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gradflow/core/error.hpp"
#include "gradflow/plot/kinds.hpp"
#include "gradflow/plot/series.hpp"
#include "gradflow/report/fields.hpp"

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
  f.logx = o.logx;
  f.xlabel = "step";
  f.ylabel = metrics::kLayerGradNorm.plot;
  const bool logx = o.logx == "on";
  const std::vector<std::string> labels = train_report_labels(in);
  size_t next = 0;
  auto add = [&](const std::string& title, const PlotJson& entries, const char* layers_key, size_t l, bool sweep) {
    Series s;
    s.title = title;
    for (const auto& e : entries) {
      const double st = e[kStep].get<double>();
      if (logx && !(st > 0)) continue;
      s.x.push_back(st);
      const auto& v = sweep ? e[layers_key][l] : e[layers_key][l][kGradNorm];
      s.y.push_back(v.is_number() ? v.get<double>() : NAN);
    }
    f.series.push_back(std::move(s));
  };
  for (const auto& i : in) {
    if (i.json.contains(kLog)) {
      const std::string label = labels[next++];
      const auto& log = i.json[kLog];
      require(!log.empty(), "'" + i.path + "' has an empty log; fix: rerun gradflow train");
      const size_t L = log[0][kLayers].size();
      for (size_t l : chosen_layers(L))
        add((labels.size() > 1 ? label + ": " : "") + "layer " + std::to_string(l), log, kLayers, l, false);
      continue;
    }
    for (const auto& r : i.json[kRuns]) {
      const size_t L = static_cast<size_t>(r[kLayers].get<long long>());
      char buf[160];
      std::snprintf(buf, sizeof buf, "%s L=%zu lr=%g w=%lld s=%lld", r[kPlacement].get<std::string>().c_str(), L,
                    r[kLr].get<double>(), r[kWarmup].get<long long>(), r[kSeed].get<long long>());
      for (size_t l : {size_t{0}, L - 1}) add(std::string(buf) + ": layer " + std::to_string(l), r[kCurve], kGradNorms, l, true);
    }
  }
  require(!f.series.empty(), "no gradient record in the inputs; fix: pass gradflow train or train-sweep --json reports");
  if (!logx) f.extra += round_xtics(f.series);
  return line_figure(f);
}

}  // namespace gradflow
