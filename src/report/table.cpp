// table.cpp — see table.hpp.
#include "gradflow/report/table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "gradflow/report/fields.hpp"
#include "gradflow/report/terminal.hpp"

namespace gradflow {
using namespace fields;
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string num(const nlohmann::ordered_json& j, const char* a, const char* b = nullptr) {
  const auto* p = &j;
  if (!p->contains(a)) return "-";
  p = &(*p)[a];
  if (b) {
    if (!p->contains(b)) return "-";
    p = &(*p)[b];
  }
  return p->is_number() ? fmt("%.4e", p->get<double>()) : "-";
}

// A per-layer metric's value in layer `l` (block_jacobian.spectral_norm).
std::string num(const nlohmann::ordered_json& l, const Metric& m) { return num(l, m.field, *m.key ? m.key : nullptr); }

}  // namespace

std::string log_bar(double value, double log10_max) { return log_bar(value, log10_max, kBarWidth, kBarPerDecade); }

void print_report_table(std::ostream& os, const nlohmann::ordered_json& report, bool bars, bool narrow) {
  std::ostringstream out;  // narrow: the prose lines wrapped at the end
  const auto& layers = report[kLayers];
  const auto& cfg = report[kConfig];
  out << "gradflow analyze: placement " << cfg.value(kPlacement, "?") << ", L = " << cfg.value(kLayers, 0)
      << ", d = " << cfg.value(kDModel, 0) << ", h = " << cfg.value(kHeads, 0) << ", d_ff = " << cfg.value(kDFf, 0)
      << ", n = " << cfg.value(kSeqLen, 0);
  if (cfg.contains("weights") && cfg["weights"].is_string())  // the weights come from a file, not from --init
    out << ", weights " << cfg["weights"].get<std::string>();
  else
    out << ", init " << cfg.value(kInit, "?") << " x" << cfg.value(kInitScale, "1");
  out << ", seed " << cfg.value(kSeed, 0) << "\n";
  const double top = layers.back()[kGradNorm].get<double>();
  double hi = -1e300;  // the bars' fixed scale: kBarPerDecade '#' per decade of ||dL/dx_l||, the largest the longest
  for (const auto& l : layers) hi = std::max(hi, std::log10(l[kGradNorm].get<double>()));
  const int bar_width = narrow ? kBarWidth / 2 : kBarWidth, per_decade = narrow ? kBarPerDecade / 2 : kBarPerDecade;
  // the Jacobian columns the report holds: spectral norms and σ_min (explicit, matrix-free), else the exact Frobenius
  // norms (streamed), else none (gradients only)
  const auto holds = [&layers](const Metric& m) {
    return std::any_of(layers.begin(), layers.end(), [&m](const auto& l) { return num(l, m) != "-"; });
  };
  std::vector<const Metric*> columns;
  if (holds(metrics::kBlockSpectralNorm) || holds(metrics::kProductSpectralNorm))
    columns = {&metrics::kBlockSpectralNorm, &metrics::kProductSpectralNorm, &metrics::kProductMinSingularValue};
  else if (holds(metrics::kBlockFrobeniusNorm) || holds(metrics::kProductFrobeniusNorm))
    columns = {&metrics::kBlockFrobeniusNorm, &metrics::kProductFrobeniusNorm};
  if (narrow && columns.size() > 2) columns.resize(2);
  // --precision: the relative error of dL/dx_l at that precision against float64's, and its underflow
  const bool low_precision = report.contains(kPrecision) && report[kPrecision].is_object();
  const std::string ptype = low_precision ? report[kPrecision].value("type", "?") : "";
  const auto precision_of = [&](const nlohmann::ordered_json& l) -> const nlohmann::ordered_json& {
    return l.at(kPrecision);
  };
  std::string rows;  // the table itself: never wrapped (its lines fit by construction)
  char line[512];
  std::snprintf(line, sizeof line, "%5s  %11s  %11s  ", "layer", metrics::kLayerGradNorm.text, "/top");
  rows += line;
  if (low_precision) {
    std::snprintf(line, sizeof line, "%11s  ", (ptype + " error").c_str());
    rows += line;
  }
  for (const Metric* m : columns) {
    std::snprintf(line, sizeof line, "%11s  ", m->text);
    rows += line;
  }
  if (!narrow) {
    std::snprintf(line, sizeof line, "%11s  %-26s", "max ||dL/dW||", "(parameter)");
    rows += line;
  }
  rows += "\n";
  for (const auto& l : layers) {
    const double g = l[kGradNorm].get<double>();
    std::string best = "-";
    double bestv = -1;
    for (const auto& [k, v] : l[kParamGradNorms].items())
      if (v.get<double>() > bestv) { bestv = v.get<double>(); best = k; }
    // every number in one scientific format: a ratio near 1e300 would print 300 digits in a fixed one
    std::snprintf(line, sizeof line, "%5d  %11.4e  %11.4e  ", l[kIndex].get<int>(), g, g / top);
    rows += line;
    if (low_precision) {
      std::snprintf(line, sizeof line, "%11s  ", num(precision_of(l), kGradRelError).c_str());
      rows += line;
    }
    for (const Metric* m : columns) {
      std::snprintf(line, sizeof line, "%11s  ", num(l, *m).c_str());
      rows += line;
    }
    if (!narrow) {
      std::snprintf(line, sizeof line, "%11.4e  %-26s", bestv, best.c_str());
      rows += line;
    }
    if (bars) rows += (narrow ? "" : " ") + log_bar(g, hi, bar_width, per_decade);
    if (low_precision) {  // marked with or without bars
      const auto& lp = precision_of(l);
      const double under = lp.value(kUnderflowFraction, 0.0), param_under = lp.value("param_underflow_fraction", 0.0);
      if (lp.value("overflow", false)) {
        rows += narrow ? " O" : " [overflow]";
      } else {
        if (under > 0) rows += narrow ? " U" : " [underflow " + fmt("%.3g", 100 * under) + "%]";
        if (param_under > 0) rows += narrow ? " P" : " [dL/dW underflow " + fmt("%.3g", 100 * param_under) + "%]";
      }
    }
    rows += "\n";
  }
  std::ostringstream after;
  if (bars)
    after << "bars: log10 " << metrics::kLayerGradNorm.text << ", " << per_decade << " # per decade, the longest ("
          << bar_width << " #) = " << fmt("%.4e", std::pow(10.0, hi)) << "; '<' = more than "
          << bar_width / per_decade << " decades below it\n";
  if (low_precision) {
    const auto& p = report[kPrecision];
    const bool autocast = p.value("regime", "cast") == "autocast";
    const std::string stream = autocast ? "float32" : ptype;  // dL/dx_l's type
    after << ptype << " error: ||g_" << ptype << " - g||/||g|| of dL/dx_l against float64 ("
          << (autocast ? "autocast to " + ptype + ", the stream float32" : "the model cast to " + ptype)
          << ", loss scale " << num(p, kLossScale) << (p.value("loss_scale_dynamic", false) ? ", dynamic" : "")
          << "); " << (narrow ? "U: some" : "[underflow x%]: x%") << " of the entries 0 in " << stream
          << " and below its range in float64; " << (narrow ? "P: some" : "[dL/dW underflow y%]: y%")
          << " of the block's parameter-gradient entries 0 and below " << ptype << "'s range; "
          << "bottom/top ratio at " << ptype << " = " << num(p[kSummary], kBottomToTopGradRatio) << "\n";
  }
  const auto& s = report[kSummary];
  after << "output ||dL/dy|| = " << num(report, kOutputGradNorm) << ", loss (" << cfg.value(kLoss, "?")
        << ") = " << num(report, kLoss) << "\n";
  after << "bottom/top gradient ratio ||dL/dx_0||/||dL/dx_{L-1}|| = " << num(s, kBottomToTopGradRatio) << "\n";
  after << "gradient growth per layer (LSQ slope of ln||dL/dx_l||) = " << num(s, kGradGrowthRatePerLayer)
        << " (factor " << num(s, kGradGrowthFactorPerLayer) << " per layer)\n";
  if (s.contains(kPerLayerRmsGainProduct))
    after << "RMS gain of P_0: true product " << num(s, kBottomProductRmsGain) << " vs product of per-layer gains "
          << num(s, kPerLayerRmsGainProduct) << "\n";
  const auto prose = [narrow](const std::string& t) { return narrow ? wrap_lines(t, kNarrowColumns) : t; };
  os << prose(out.str()) << rows << prose(after.str());
}

}  // namespace gradflow
