// metric_labels.hpp — axis labels (gnuplot enhanced text, with the quantity's symbol) for the scalar metrics of
// compare/sweep reports (each metric's label is defined with its name in gradflow/report/fields.hpp) and for the
// swept parameters; shared by the sensitivity and claims kinds.
#pragma once
#include <string>

#include "gradflow/report/fields.hpp"

namespace gradflow {

// The label of a metric ("summary.bottom_to_top_grad_ratio" -> "‖∂L/∂x_0‖ / ‖∂L/∂x_{L-1}‖"); "" when it has none
// (then the metric's name is shown verbatim).
std::string metric_label(const std::string& metric);
// The label of a swept parameter ("init-scale" -> "init scale C"), or of depth ("layers").
std::string param_label(const std::string& param);

// The default metric of sensitivity and claims figures: the bottom/top gradient ratio.
inline const std::string kDefaultMetric = fields::metric_name(fields::metrics::kGradRatio);

}  // namespace gradflow
