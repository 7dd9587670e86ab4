// sensitivity_series.hpp — the metric-against-parameter figure of one compare/sweep report, shared by the
// sensitivity kind (one figure) and the claims kind (one panel per report).
#pragma once
#include <string>

#include "gradflow/plot/inputs.hpp"
#include "gradflow/plot/series.hpp"

namespace gradflow {

// One series per placement (and depth, in a sweep of another parameter); titles start with `prefix`.
// Throws Error naming `metric` when no group holds it.
LineFigure sensitivity_figure(const PlotInput& in, const std::string& metric, const std::string& prefix);

}  // namespace gradflow
