// analysis_options.cpp — see analysis_options.hpp.
#include "gradflow/run/analysis_options.hpp"

#include "gradflow/core/error.hpp"

namespace gradflow {

void add_sensitivity_options(CLI::App& sub, AnalysisOptions& an) {
  sub.add_option("--sensitivity-probes", an.sensitivity_probes, "output sensitivity to parameters (Liu et al. 2020): "
                 "random perturbations K (0 skips; each costs about two forward passes)")->capture_default_str();
  sub.add_option("--sensitivity-size", an.sensitivity_size, "relative size r of those perturbations: delta = r*|theta|*N(0,1)")
      ->capture_default_str();
}

void check_sensitivity_options(const CLI::App& sub, const AnalysisOptions& an) {
  require(sub.count("--sensitivity-size") == 0 || an.sensitivity_probes > 0,
          "--sensitivity-size has no effect without probes; fix: add --sensitivity-probes K (e.g. 16) or drop it");
}

}  // namespace gradflow
