// experiment_options.hpp — what compare and sweep share among their options (--seeds, --json, --csv, --resume,
// --threads, --plan, ...), registered on a CLI::App: the command line's subcommand and the spec parser
// (commands/spec_run.hpp) register the same ones, so a spec's "options" are the command's flags.
#pragma once
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "gradflow/experiments/plan.hpp"
#include "gradflow/experiments/auto_seeds.hpp"
#include "gradflow/run/model_settings.hpp"

namespace gradflow {

struct ExperimentOptions {
  ModelSettings model;
  std::string seeds = "3";  // --seeds N | auto (with --ci-target; AutoSeeds, auto_seeds.hpp)
  double ci_target = 0, ci_abs = 0;
  int max_seeds = 200, seed_batch = 10;
  std::string ci_metrics = "summary.bottom_to_top_grad_ratio";
  int threads = 0;
  std::string json, csv, resume, plan;  // --plan DIR: write the plan instead of running
  bool gradients_only = false, quiet = false;
  std::string device = "cpu";  // --device cpu | cuda
};

// The options given explicitly on `sub`, as a spec's "options" object: where outputs go and how the experiment runs
// (--json, --csv, --resume, --threads, --quiet, --plan, ...) are not part of it.
nlohmann::ordered_json given_options(const CLI::App& sub);

// --seeds and its auto options as the experiment runs them: the repetitions (the first batch under auto) and the
// AutoSeeds settings; Error (exit 2) naming the option and a fix for a bad --seeds, an auto option without auto, and
// auto without --ci-target (run_experiment checks the settings themselves: check_auto_seeds).
int parse_seeds(const CLI::App& sub, const ExperimentOptions& o, AutoSeeds& auto_seeds);

// Adds the model flags and the shared experiment flags to `sub`.
void add_experiment_options(CLI::App& sub, ExperimentOptions& o);

// --plan DIR (compare, sweep and train-sweep): write the plan there instead of running (docs/cluster.md).
void add_plan_option(CLI::App& sub, std::string& dir);

// compare and sweep on a --weights checkpoint: the axes not given on the command line come from it (its number of
// layers when !layers_given; a Hugging Face checkpoint's placement when !placements_given; a torch-encoder
// state_dict does not say its placement, so the given or default placements run). A given placement that differs
// from a Hugging Face checkpoint's is an Error naming both (`placements_option`: "--placements" or "--placement").
// The checkpoint is read once, here, and kept in o.model.rc.files for every point. No-op without --weights.
void axes_from_checkpoint(ExperimentOptions& o, PlanAxes& axes, const std::string& placements_option,
                          bool placements_given, bool layers_given);

}  // namespace gradflow
