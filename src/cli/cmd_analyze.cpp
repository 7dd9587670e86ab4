// cmd_analyze.cpp — `gradflow analyze [model options] [--json FILE]`: the table on stdout, the report in JSON.
#include <unistd.h>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/model_options.hpp"
#include "gradflow/report/atomic_file.hpp"
#include "gradflow/report/table.hpp"

namespace gradflow::cli {
namespace {
struct AnalyzeOptions {
  ModelOptions model;
  std::string json;
  bool gradients_only = false;
  bool quiet = false;
};

void run_analyze(const AnalyzeOptions& o) {
  RunConfig rc = resolve(o.model);
  rc.analysis.jacobians = !o.gradients_only;
  rc.analysis.progress = !o.quiet;
  check_explicit_memory(rc);
  if (!o.json.empty()) check_writable(o.json, "--json");
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
  sub->add_flag("-q,--quiet", opts->quiet, "no table, no progress");
  sub->callback([opts] { run_analyze(*opts); });
}

}  // namespace gradflow::cli
