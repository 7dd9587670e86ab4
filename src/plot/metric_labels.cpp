// metric_labels.cpp — see metric_labels.hpp. Italic symbols as in docs/math.md: L loss, x_l block input, W weight.
#include "metric_labels.hpp"

namespace gradflow {

std::string metric_label(const std::string& m) {
  const fields::Metric* metric = fields::find_metric(m);
  if (!metric && m == fields::kActivationRms) return "RMS of {/:Italic x_l}";  // per layer (claims' Lemma 2 panel)
  if (!metric && m == std::string(fields::kPrecision) + "." + fields::kGradRelError)  // per layer (--precision)
    return "error of ∂{/:Italic L}/∂{/:Italic x_l} vs float64";
  return metric ? metric->plot : "";
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
