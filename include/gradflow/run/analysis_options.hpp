// analysis_options.hpp — analysis flags that analyze and the experiment commands (compare, sweep, run SPEC) share:
// the output sensitivity to parameters (Liu et al. 2020; docs/math.md §11). Declared once, so the help text, the
// default and the check of a flag given without its probes are the same in every command.
#pragma once
#include <CLI/CLI.hpp>

#include "gradflow/run/options.hpp"

namespace gradflow {

// --sensitivity-probes K and --sensitivity-size r into `an`.
void add_sensitivity_options(CLI::App& sub, AnalysisOptions& an);

// --sensitivity-size given without --sensitivity-probes (it would have no effect): an Error naming the fix.
void check_sensitivity_options(const CLI::App& sub, const AnalysisOptions& an);

}  // namespace gradflow
