// cmd_analyze.cpp — `gradflow analyze [model options] [--json FILE]`: the table on stdout, the report in JSON. The
// options and the run are the library's (commands/analyze_command.hpp), shared with the Python module.
#include <unistd.h>

#include <iostream>

#include "cli/commands.hpp"
#include "gradflow/commands/analyze_command.hpp"
#include "gradflow/report/atomic_file.hpp"
#include "gradflow/report/table.hpp"
#include "gradflow/run/run_inputs.hpp"

namespace gradflow::cli {
namespace {
struct AnalyzeOptions {
  AnalyzeRequest request;
  std::string json;
};

void run_analyze(const AnalyzeOptions& o) {
  const auto report = run_analyze_request(o.request, [&o](RunConfig& rc) {
    check_outputs({{"--json", o.json}}, run_input_paths(rc));  // before any work
  });
  if (!o.request.quiet) print_report_table(std::cout, report, ::isatty(STDOUT_FILENO));
  if (!o.json.empty()) write_file_atomic(o.json, report.dump(2) + "\n");
}
}  // namespace

void setup_analyze(CLI::App& app) {
  auto opts = std::make_shared<AnalyzeOptions>();
  auto* sub = app.add_subcommand("analyze", "gradient norms and Jacobian products across depth, as a table and JSON");
  add_analyze_options(*sub, opts->request);
  sub->add_option("--json", opts->json, "write the report to this file (docs/report-schema.md)")->check(non_empty_path());
  sub->add_flag("-q,--quiet", opts->request.quiet, "no table, no progress");
  sub->callback([opts, sub] {
    note_given_analyze_options(*sub, opts->request);
    run_analyze(*opts);
  });
}

}  // namespace gradflow::cli
