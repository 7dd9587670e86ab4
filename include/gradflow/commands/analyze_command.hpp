// analyze_command.hpp — `gradflow analyze`'s options and run as a library call: the command line (src/cli) and the
// Python module (src/python) register the same options on a CLI::App, so both parse, check and refuse them alike,
// and run the same analysis.
#pragma once
#include <functional>
#include <set>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "gradflow/run/model_settings.hpp"

namespace gradflow {

struct AnalyzeRequest {
  ModelSettings model;           // the model options, and the engine options in model.rc.analysis
  std::string mode = "auto";     // --mode
  std::string device = "cpu";    // --device
  bool gradients_only = false;   // --gradients-only
  bool quiet = false;            // -q: no table, no progress, no notes
  std::set<std::string> given;   // the engine options given (note_given_analyze_options)
};

// Registers every option of `gradflow analyze` but --json and -q on `sub`; values land in `r`.
void add_analyze_options(CLI::App& sub, AnalyzeRequest& r);
// After `sub` parsed: records which engine options were given and checks the sensitivity options (Error).
void note_given_analyze_options(const CLI::App& sub, AnalyzeRequest& r);

// The run's settings resolved (the model, its files' sizes), before the engine is chosen; `rc_hook` may change them
// (the Python module puts its in-memory arrays in rc.files) and check them (the command line: its --json against
// the inputs). Then the engine is chosen (refusing what does not fit, and engine options the chosen engine does not
// read), the analysis runs, and the report, with "blas_kernel", is returned.
nlohmann::ordered_json run_analyze_request(const AnalyzeRequest& r,
                                           const std::function<void(RunConfig&)>& rc_hook = nullptr);

}  // namespace gradflow
