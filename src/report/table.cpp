// table.cpp — see table.hpp.
#include "gradflow/report/table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace gradflow {
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

}  // namespace

void print_report_table(std::ostream& os, const nlohmann::ordered_json& report, bool bars) {
  const auto& layers = report["layers"];
  const auto& cfg = report["config"];
  os << "gradflow analyze: placement " << cfg.value("placement", "?") << ", L = " << cfg.value("layers", 0)
     << ", d = " << cfg.value("d_model", 0) << ", h = " << cfg.value("heads", 0) << ", d_ff = " << cfg.value("d_ff", 0)
     << ", n = " << cfg.value("seq_len", 0) << ", init " << cfg.value("init", "?") << " x" << cfg.value("init_scale", "1")
     << ", seed " << cfg.value("seed", 0) << "\n";
  const double top = layers.back()["grad_norm"].get<double>();
  double lo = 1e300, hi = -1e300;
  for (const auto& l : layers) {
    lo = std::min(lo, std::log10(l["grad_norm"].get<double>()));
    hi = std::max(hi, std::log10(l["grad_norm"].get<double>()));
  }
  char line[512];
  std::snprintf(line, sizeof line, "%5s  %11s  %9s  %11s  %11s  %11s  %11s  %-26s\n", "layer", "||dL/dx_l||", "/top",
                "||B_l||_2", "||P_l||_2", "smin(P_l)", "max ||dL/dW||", "(parameter)");
  os << line;
  for (const auto& l : layers) {
    const double g = l["grad_norm"].get<double>();
    std::string best = "-";
    double bestv = -1;
    for (const auto& [k, v] : l["param_grad_norms"].items())
      if (v.get<double>() > bestv) { bestv = v.get<double>(); best = k; }
    std::snprintf(line, sizeof line, "%5d  %11.4e  %9.4f  %11s  %11s  %11s  %11.4e  %-26s", l["index"].get<int>(), g,
                  g / top, num(l, "block_jacobian", "spectral_norm").c_str(),
                  num(l, "product_jacobian", "spectral_norm").c_str(),
                  num(l, "product_jacobian", "min_singular_value").c_str(), bestv, best.c_str());
    os << line;
    if (bars) {
      const int width = hi > lo ? static_cast<int>(std::lround(1 + 23 * (std::log10(g) - lo) / (hi - lo))) : 12;
      os << " " << std::string(static_cast<size_t>(width), '#');
    }
    os << "\n";
  }
  const auto& s = report["summary"];
  os << "output ||dL/dy|| = " << num(report, "output_grad_norm") << ", loss (" << cfg.value("loss", "?")
     << ") = " << num(report, "loss") << "\n";
  os << "bottom/top gradient ratio ||dL/dx_0||/||dL/dx_{L-1}|| = " << num(s, "bottom_to_top_grad_ratio") << "\n";
  os << "gradient growth per layer (LSQ slope of ln||dL/dx_l||) = " << num(s, "grad_growth_rate_per_layer")
     << " (factor " << num(s, "grad_growth_factor_per_layer") << " per layer)\n";
  if (s.contains("per_layer_rms_gain_product"))
    os << "RMS gain of P_0: true product " << num(s, "bottom_product_rms_gain") << " vs product of per-layer gains "
       << num(s, "per_layer_rms_gain_product") << "\n";
}

}  // namespace gradflow
