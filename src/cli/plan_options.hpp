// plan_options.hpp — `--plan DIR` on compare, sweep, train-sweep (and so on `run SPEC`), and the hidden options by
// which `gradflow task` and `gradflow merge` run a plan's experiment through the very same command and runner
// (experiments/plan_dir.hpp, docs/cluster.md).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "gradflow/experiments/plan_dir.hpp"

namespace gradflow::cli {

struct PlanFlags {
  std::string dir;             // --plan DIR
  std::string step;            // (hidden) --plan-step task|merge, set by `gradflow task` / `gradflow merge`
  std::string tasks;           // (hidden) --plan-tasks IDS
  bool allow_partial = false;  // (hidden) --plan-allow-partial
};

void add_plan_options(CLI::App& sub, PlanFlags& f);

// The runner's plan step for these flags. Writing a plan: the manifest's head records `spec` (the experiment's
// {"gradflow_spec", "command", "options"}) and, for `gradflow run SPEC`, the spec file's path and content; the
// options that would have no effect with --plan (given: true) are refused, naming where they belong.
PlanStep plan_step(const PlanFlags& f, const nlohmann::ordered_json& spec, const std::string& spec_file,
                   const std::vector<std::pair<std::string, bool>>& no_effect);

// Parses `words` (command first: compare, sweep or train-sweep) as the command line would, and runs it;
// `where` names their source in errors ("spec 'c5.json'", "plan 'DIR'").
void run_experiment_words(const std::vector<std::string>& words, const std::string& where, const std::string& command);

// Runs step `step` ("task" | "merge") of the plan in DIR: the experiment's command with the spec's options, the
// step's flags and `extra` (the step's own options).
void run_plan_step(const std::string& dir, const std::string& step, const std::vector<std::string>& extra);

}  // namespace gradflow::cli
