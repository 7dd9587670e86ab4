// experiment_options.hpp — what compare and sweep share: their flags (--seeds, --json, --csv, --resume,
// --threads, ...), resolving one (placement, depth, swept value) point through the model options by name, the
// spec a report records, and running the experiment end to end.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/model_options.hpp"
#include "gradflow/experiments/plan.hpp"

namespace gradflow::cli {

struct ExperimentOptions {
  ModelSettings model;
  int seeds = 3;
  int threads = 0;
  std::string json, csv, resume, spec_file;
  bool gradients_only = false, quiet = false;
};

// Adds the model flags and the shared experiment flags to `sub`.
void add_experiment_options(CLI::App& sub, ExperimentOptions& o);

// Reads --weights, --input and --cotangent once, so every point shares their contents (resolve_point).
void read_files_once(ExperimentOptions& o);
// The RunConfig of one point: the model options given, then `overrides` ({{"placement", "pre"}, {"layers", "24"}})
// set by name (set_model_option) and resolved exactly as `gradflow analyze` would.
RunConfig resolve_point(const ExperimentOptions& o, const std::vector<std::pair<std::string, std::string>>& overrides);

// Plans, runs (parallel, resumable), aggregates, writes --json/--csv and prints the table.
void run_experiment(const CLI::App& sub, const std::string& kind, const PlanAxes& axes, const MakePoint& make,
                    const ExperimentOptions& o);

}  // namespace gradflow::cli
