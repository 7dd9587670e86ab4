// cmd_analyze.cpp — `gradflow analyze [model options] [--json FILE]`: the table on stdout, the report in JSON.
#include <unistd.h>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/model_options.hpp"
#include "gradflow/run/engine.hpp"
#include "gradflow/report/atomic_file.hpp"
#include "gradflow/report/table.hpp"

namespace gradflow::cli {
namespace {
struct AnalyzeOptions {
  ModelSettings model;
  std::string json;
  std::string mode = "auto";
  bool gradients_only = false;
  bool quiet = false;
};

void run_analyze(const AnalyzeOptions& o) {
  RunConfig rc = resolve(o.model);
  rc.analysis.engine_request = parse_engine_request(o.mode, o.gradients_only);
  rc.analysis.progress = !o.quiet;
  choose_engine(rc.model, rc.analysis);  // refuses bad engine options and runs that do not fit, before any work
  check_outputs({{"--json", o.json}}, {{"--weights", rc.weights}, {"--input", rc.input}, {"--cotangent", rc.cotangent}});
  const auto report = analyze(rc);
  if (!o.quiet) print_report_table(std::cout, report, ::isatty(STDOUT_FILENO));
  if (!o.json.empty()) write_file_atomic(o.json, report.dump(2) + "\n");
}
}  // namespace

void setup_analyze(CLI::App& app) {
  auto opts = std::make_shared<AnalyzeOptions>();
  auto* sub = app.add_subcommand("analyze", "gradient norms and Jacobian products across depth, as a table and JSON");
  add_model_options(*sub, opts->model);
  sub->add_option("--json", opts->json, "write the report to this file (docs/report-schema.md)");
  sub->add_flag("--gradients-only", opts->gradients_only, "skip the explicit Jacobians (gradient norms only)");
  auto& an = opts->model.rc.analysis;  // the engine options (analyze only)
  sub->add_option("--mode", opts->mode, "explicit (dense Jacobians) | matrix-free (JVP/VJP) | auto (explicit if it fits in --max-memory)")
      ->check(CLI::IsMember({"auto", "explicit", "matrix-free"}))->capture_default_str();
  sub->add_flag("--spectrum", an.spectrum, "explicit mode: every singular value of B_l and P_l, with summary statistics");
  sub->add_option("--top-k", an.top_k, "matrix-free: largest singular values per B_l and P_l (Lanczos)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--spectral-layers", an.spectral_layers, "matrix-free: P_l for all | none | bottom | top | 0,6,12 (B_l: all unless none)")
      ->capture_default_str();
  sub->add_option("--hutchinson-probes", an.hutchinson_probes, "matrix-free: probes K of the Frobenius estimates (0 skips)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  sub->add_flag("-q,--quiet", opts->quiet, "no table, no progress");
  sub->callback([opts] { run_analyze(*opts); });
}

}  // namespace gradflow::cli
