// auto_seeds.hpp — `--seeds auto`: seeds added in batches until every group's summary quantities, and every paired
// comparison of them, are known to a stated precision (docs/experiments.md, "Seeds until the intervals are narrow").
// The stopping rule looks only at interval widths, never at a verdict or a direction, so a verdict at the final n keeps
// its level. Repetitions are still seed = base + r: a run that stops at n seeds gives the report of `--seeds n`, bit for
// bit.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gradflow {

struct AutoSeeds {
  bool enabled = false;   // --seeds auto
  double ci_target = 0;   // --ci-target P: relative half-width (of the geometric mean for positive quantities)
  double ci_abs = 0;      // --ci-abs A: an absolute half-width that also suffices (quantities near zero); 0: none
  int max_seeds = 200;    // --max-seeds M
  int batch = 10;         // --seed-batch B: the first batch and each one after it
  std::vector<std::string> metrics = {"summary.bottom_to_top_grad_ratio"};  // --ci-metrics
};

// Checks the options (Error, exit 2, naming the option and a fix): a target in (0, 1), ci_abs ≥ 0, batch ≥ 2,
// max_seeds ≥ batch, at least one metric.
void check_auto_seeds(const AutoSeeds& a);

// The half-widths of `report` that do not meet the target yet: "<group or pair>: <metric> ±x % (target y %)"; empty
// when every one does. A metric absent from a group is an Error naming it (the check would never look at it).
std::vector<std::string> auto_seeds_unmet(const nlohmann::ordered_json& report, const AutoSeeds& a);

// What the report records under seeds.auto: the settings, the batches run, whether the target was met and, if not,
// the first quantities that missed it.
nlohmann::ordered_json auto_seeds_json(const AutoSeeds& a, int batches, const std::vector<std::string>& unmet);

}  // namespace gradflow
