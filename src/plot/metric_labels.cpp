// metric_labels.cpp — see metric_labels.hpp. Italic symbols as in docs/math.md: L loss, x_l block input, W weight.
#include "metric_labels.hpp"

#include <map>

namespace gradflow {

std::string metric_label(const std::string& m) {
  static const std::map<std::string, std::string> labels = {
      {"summary.bottom_to_top_grad_ratio", "‖∂{/:Italic L}/∂{/:Italic x}_0‖ / ‖∂{/:Italic L}/∂{/:Italic x}_{{/:Italic L}-1}‖"},
      {"summary.grad_growth_factor_per_layer", "gradient growth factor per layer"},
      {"summary.grad_growth_rate_per_layer", "slope of ln‖∂{/:Italic L}/∂{/:Italic x}_{/:Italic l}‖ per layer"},
      {"summary.bottom_product_rms_gain", "RMS gain of {/:Italic P}_0"},
      {"summary.per_layer_rms_gain_product", "Π_{/:Italic l} RMS gain of {/:Italic B_l}"},
      {"bottom.grad_norm", "‖∂{/:Italic L}/∂{/:Italic x}_0‖"},
      {"top.grad_norm", "‖∂{/:Italic L}/∂{/:Italic x}_{{/:Italic L}-1}‖"},
      {"top.param_grad_norms.linear2.weight", "‖∂{/:Italic L}/∂{/:Italic W}_2‖, top layer"},
      {"bottom.param_grad_norms.linear2.weight", "‖∂{/:Italic L}/∂{/:Italic W}_2‖, bottom layer"},
      {"top.activation_rms", "RMS of {/:Italic x}_{{/:Italic L}-1}"},
      {"output_grad_norm", "‖∂{/:Italic L}/∂{/:Italic y}‖"},
      {"output_rms", "RMS of {/:Italic y}"},
  };
  const auto it = labels.find(m);
  return it == labels.end() ? "" : it->second;
}

std::string param_label(const std::string& p) {
  if (p == "init-scale") return "initialization scale {/:Italic C}";
  if (p == "layers") return "depth {/:Italic L}";
  if (p == "d-model") return "width {/:Italic d}";
  if (p == "residual-scale") return "residual weight λ";
  if (p == "seq-len") return "tokens {/:Italic n}";
  return p;
}

}  // namespace gradflow
