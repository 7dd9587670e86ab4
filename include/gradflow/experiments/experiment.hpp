// experiment.hpp — the report of a compare or sweep, built from the per-configuration analyze reports:
//   groups  one per (placement, depth, swept value[, second swept value]): the summary over seeds (statistics.hpp:
//           mean, std, n, standard error, t interval, median, geometric mean and interval) of every per-layer and
//           scalar metric
//   ratios  placement a / placement b at the same depth and values, for every scalar metric: the summary over
//           seeds of the per-seed ratio (seeds are paired: same seed, same input and cotangent), the ratio of the
//           means, and the paired comparison with its verdict
//   comparisons  the same for two groups of one placement that differ in one other axis (depth, a swept value)
//   fits    power-law exponent k of each scalar metric, y ≈ c·x^k, along the experiment's axis (x = depth L in a
//           compare over several depths, the swept value in a sweep; in a 2-D sweep along each swept option with the
//           other held fixed): fitted per seed (mean ± std) and on the means
// plus the spec that produced it and the seed rule. docs/experiments.md describes every field.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gradflow/experiments/plan.hpp"
#include "gradflow/experiments/report_files.hpp"

namespace gradflow {

struct ExperimentInfo {
  std::string kind;            // "compare" | "sweep"
  PlanAxes axes;
  nlohmann::ordered_json spec;  // the spec that produced it (runnable with `gradflow run`)
};

nlohmann::ordered_json experiment_report(const ExperimentInfo& info, const std::vector<Configuration>& configs,
                                         const std::vector<nlohmann::ordered_json>& reports);

// CSV, long format, one row per (placement, depth, [param, value, [param2, value2,]] layer, metric); layer is empty
// for scalar metrics; placement "a/b" rows are the ratios.
// Header: placement,depth,[param,value,[param2,value2,]]layer,metric,mean,std,n,se,ci_low,ci_high,median,geomean,
// geo_ci_low,geo_ci_high,verdict (the interval columns statistics.hpp's summary; verdict: a ratio row's paired verdict).
std::string experiment_csv(const nlohmann::ordered_json& report);

// The comparison table on stdout: the key metrics per group, the ratios, the fitted exponents.
void print_experiment_table(std::ostream& os, const nlohmann::ordered_json& report);

// The table and the CSV, for write_report (report_files.hpp).
inline constexpr ReportWriters kExperimentWriters{print_experiment_table, experiment_csv};

}  // namespace gradflow
