// cmd_analyze.cpp — `gradflow analyze [model options] [--json FILE]`: the table on stdout, the report in JSON. The
// options and the run are the library's (commands/analyze_command.hpp), shared with the Python module.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/terminal_options.hpp"
#include "gradflow/commands/analyze_command.hpp"
#include "gradflow/commands/analyze_over_training.hpp"
#include "gradflow/commands/analyze_plan.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/report/atomic_file.hpp"
#include "gradflow/report/table.hpp"
#include "gradflow/run/run_inputs.hpp"
#include "gradflow/report/json_text.hpp"

namespace gradflow::cli {
namespace {
struct AnalyzeOptions {
  AnalyzeRequest request;
  std::string json;
  std::vector<std::string> weights;  // --weights: one checkpoint, or several (a run's, over training)
  TerminalOptions terminal;
  AnalyzePlanOptions plan;  // --plan DIR [--tasks T]: a streamed run split into tasks (commands/analyze_plan.hpp)
};

// One line per checkpoint: the step, the loss and the gradient at the bottom and the top block's input.
void print_over_training(std::ostream& os, const nlohmann::ordered_json& report) {
  os << "over training: " << report["checkpoints"].size() << " checkpoints, input "
     << report["over_training"]["input"].get<std::string>() << "\n";
  os << "      step          loss   ||dL/dx_0||  ||dL/dx_L-1||  bottom/top\n";
  for (const auto& c : report["checkpoints"]) {
    const auto& r = c["report"];
    const auto& layers = r["layers"];
    const double bottom = layers.front()["grad_norm"].get<double>(), top = layers.back()["grad_norm"].get<double>();
    char line[160];
    std::snprintf(line, sizeof line, "%10lld  %12.6g  %12.6g  %13.6g  %10.4g\n", c["step"].get<long long>(),
                  r["loss"].get<double>(), bottom, top, bottom / top);
    os << line;
  }
}

void run_over_training(const AnalyzeOptions& o, const std::vector<TrainingCheckpoint>& checkpoints) {
  const auto report = run_analyze_over_training(
      o.request, checkpoints,
      [&o](RunConfig& rc) { check_outputs({{"--json", o.json}}, run_input_paths(rc)); },
      [&o, n = checkpoints.size()](size_t i, const TrainingCheckpoint& c) {
        if (!o.request.quiet)
          std::fprintf(stderr, "gradflow: checkpoint %zu of %zu: step %lld (%s)\n", i + 1, n, c.step, c.path.c_str());
      });
  if (!o.request.quiet) print_over_training(std::cout, report);
  if (!o.json.empty()) write_file_atomic(o.json, json_text(report, 2) + "\n");
}

void run_analyze(const AnalyzeOptions& o) {
  const auto report = run_analyze_request(o.request, [&o](RunConfig& rc) {
    check_outputs({{"--json", o.json}}, run_input_paths(rc));  // before any work
  });
  if (!o.request.quiet) {
    const TerminalStyle style = o.terminal.style();
    print_report_table(std::cout, report, style.bars, style.narrow);
  }
  if (!o.json.empty()) write_file_atomic(o.json, json_text(report, 2) + "\n");
}
}  // namespace

void setup_analyze(CLI::App& app) {
  auto opts = std::make_shared<AnalyzeOptions>();
  auto* sub = app.add_subcommand("analyze", "gradient norms and Jacobian products across depth, as a table and JSON");
  add_analyze_options(*sub, opts->request);
  // --weights takes one checkpoint, or several: a run's checkpoints, analyzed over training (analyze_over_training.hpp)
  sub->remove_option(sub->get_option("--weights"));
  sub->add_option("--weights", opts->weights,
                  "parameters from a checkpoint (a torch-encoder state_dict, or a Hugging Face folder or .safetensors "
                  "file: docs/formats.md); several, a folder of them or a glob in quotes ('ck/step_*.safetensors'): "
                  "one report over the checkpoints in step order")
      ->expected(1, -1);
  sub->add_option("--json", opts->json, "write the report to this file (docs/report-schema.md)")->check(non_empty_path());
  sub->add_flag("-q,--quiet", opts->request.quiet, "no table, no progress");
  add_terminal_options(*sub, opts->terminal);
  add_analyze_plan_options(*sub, opts->plan);
  sub->callback([opts, sub] {
    require(!opts->plan.dir.empty() || sub->count("--tasks") == 0,
            "--tasks splits a plan written with --plan; fix: add --plan DIR (with --mode streamed), or drop --tasks");
    if (!opts->plan.dir.empty()) {
      require(opts->weights.size() <= 1 && !names_training_checkpoints(opts->weights),
              "--plan splits one streamed run, and --weights names several checkpoints; fix: give one checkpoint");
      require(opts->json.empty(), "--json has no effect with --plan (nothing runs now); fix: give it to gradflow merge");
      if (!opts->weights.empty()) set_model_option(opts->request.model, "weights", opts->weights[0]);
      note_given_analyze_options(*sub, opts->request);
      write_analyze_plan(*sub, opts->request, opts->plan);
      return;
    }
    if (!names_training_checkpoints(opts->weights)) {
      if (!opts->weights.empty()) set_model_option(opts->request.model, "weights", opts->weights[0]);
      note_given_analyze_options(*sub, opts->request);
      run_analyze(*opts);
      return;
    }
    const std::vector<TrainingCheckpoint> checkpoints = training_checkpoints(opts->weights);
    note_given_analyze_options(*sub, opts->request);
    run_over_training(*opts, checkpoints);  // a folder or pattern of checkpoints: over training, even if only one
  });
}

}  // namespace gradflow::cli
