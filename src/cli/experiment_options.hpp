// experiment_options.hpp — what compare and sweep share on the command line: their flags (--seeds, --json, --csv,
// --resume, --threads, ...), the spec a report records, and the output of the experiment the library runs.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/model_options.hpp"
#include "cli/plan_options.hpp"
#include "gradflow/experiments/plan.hpp"

namespace gradflow::cli {

struct ExperimentOptions {
  ModelSettings model;
  int seeds = 3;
  int threads = 0;
  std::string json, csv, resume, spec_file;
  bool gradients_only = false, quiet = false;
  std::string device = "cpu";  // --device cpu | cuda
  PlanFlags plan;
};

// The options given explicitly on `sub`, as a spec's "options" object: where outputs go and how the experiment runs
// (--json, --csv, --resume, --threads, --quiet, --plan, ...) are not part of it.
nlohmann::ordered_json given_options(const CLI::App& sub);

// Adds the model flags and the shared experiment flags to `sub`.
void add_experiment_options(CLI::App& sub, ExperimentOptions& o);

// compare and sweep on a --weights checkpoint: the axes not given on the command line come from it (its number of
// layers when !layers_given; a Hugging Face checkpoint's placement when !placements_given; a torch-encoder
// state_dict does not say its placement, so the given or default placements run). A given placement that differs
// from a Hugging Face checkpoint's is an Error naming both (`placements_option`: "--placements" or "--placement").
// The checkpoint is read once, here, and kept in o.model.rc.files for every point. No-op without --weights.
void axes_from_checkpoint(ExperimentOptions& o, PlanAxes& axes, const std::string& placements_option,
                          bool placements_given, bool layers_given);

// Runs the experiment through the library (experiments/run_experiment.hpp), then prints the table and writes
// --json/--csv atomically; the spec recorded is the options given on `sub`. axes: its placements, depths and swept
// values (the seeds come from `o`).
void run_experiment_command(const CLI::App& sub, const std::string& kind, const PlanAxes& axes,
                            const ExperimentOptions& o);

}  // namespace gradflow::cli
