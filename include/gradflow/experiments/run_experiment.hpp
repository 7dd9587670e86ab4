// run_experiment.hpp — a compare or sweep end to end, callable without the command line: every configuration
// resolved from the model options by name (run/model_settings.hpp), refused up front when one does not fit
// in memory, run in parallel and resumable (runner.hpp), aggregated over seeds (experiment.hpp).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "gradflow/backend/backend.hpp"
#include "gradflow/run/model_settings.hpp"
#include "gradflow/experiments/auto_seeds.hpp"
#include "gradflow/experiments/plan.hpp"
#include "gradflow/experiments/runner.hpp"

namespace gradflow {

struct ExperimentSettings {
  std::string kind;             // "compare" (placements × depths) | "sweep" (placements × values of axes.param
                                // [× values of axes.param2])
  ModelSettings model;          // the model options given; each point sets its placement, depth or swept value
  PlanAxes axes;
  bool gradients_only = false;  // --gradients-only
  BackendKind backend = BackendKind::Cpu;  // --device: where each point's explicit products or streamed chain run;
                                           // a device runs one configuration at a time
  RunnerOptions runner;         // threads, --resume, progress
  AutoSeeds auto_seeds;         // --seeds auto: axes.seeds grows in batches until the intervals are narrow
  nlohmann::ordered_json spec;  // the spec that reproduces the experiment (recorded in the report)
  std::string spec_file;        // the spec file it came from ("" for none): recorded with its content
};

// The RunConfig of one point: the model options, then the point's placement and its depth (compare) or swept values
// (sweep: value of axes.param, value2 of axes.param2 when there is one), set by name and resolved exactly as
// `gradflow analyze` would; Error naming the point otherwise.
RunConfig resolve_point(const ExperimentSettings& e, const std::string& placement, Index depth, const std::string& value,
                        const std::string& value2 = "");

// The experiment report (experiment.hpp); the files named by the model options are read once. With a plan step
// (e.runner.plan): null after writing the plan or running tasks; a merge's report says under "partial" which
// configurations it lacks (allow_partial).
nlohmann::ordered_json run_experiment(ExperimentSettings e);

}  // namespace gradflow
