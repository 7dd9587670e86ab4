// cmd_analyze.cpp — `gradflow analyze [model options] [--json FILE]`: the table on stdout, the report in JSON.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <set>

#include "gradflow/run/analysis_options.hpp"
#include "cli/commands.hpp"
#include "gradflow/run/model_options.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/run/engine.hpp"
#include "gradflow/run/run_inputs.hpp"
#include "gradflow/run/time_estimate.hpp"
#include "gradflow/experiments/runner.hpp"
#include "gradflow/report/atomic_file.hpp"
#include "gradflow/report/table.hpp"

namespace gradflow::cli {
namespace {
struct AnalyzeOptions {
  ModelSettings model;
  std::string json;
  std::string mode = "auto";
  std::string device = "cpu";
  bool gradients_only = false;
  bool quiet = false;
  std::set<std::string> given;  // the engine options given on the command line (set by the callback)
};

// An engine option the chosen engine does not read is refused when the engine was asked for (--mode explicit,
// --gradients-only), and noted when --mode auto chose it: nothing is ignored silently.
void check_engine_options(const AnalyzeOptions& o, const EngineChoice& choice) {
  require(!(o.gradients_only && o.given.count("--mode")),
          "--gradients-only and --mode " + o.mode + " both choose the engine; fix: drop one of them");
  require(!(o.gradients_only && o.given.count("--spectrum")),
          "--spectrum needs the Jacobians that --gradients-only skips; fix: drop one of them");
  require(!o.given.count("--max-time") || (!o.gradients_only && o.mode == "auto"),
          "--max-time is the budget --mode auto weighs streamed mode by, not used by " +
              (o.gradients_only ? std::string("--gradients-only") : "--mode " + o.mode) +
              "; fix: drop --max-time or use --mode auto");
  if (choice.streamed_considered && !o.quiet)
    std::fprintf(stderr, "gradflow: note: %s\n", choice.reason.c_str());
  // each engine's own options: refused when another engine was asked for, noted when auto chose another one
  const std::string asked = o.gradients_only ? std::string("--gradients-only") : "--mode " + o.mode;
  const auto check = [&](const char* name, Engine reader, const char* mode) {
    if (!o.given.count(name) || choice.engine == reader) return;
    if (o.gradients_only || o.mode != "auto")
      throw Error(std::string(name) + " applies to --mode " + mode + " only, not to " + asked + "; fix: drop " + name +
                  " or use --mode " + mode);
    if (!o.quiet)
      std::fprintf(stderr, "gradflow: note: %s unused: --mode auto chose %s mode (--mode %s would use it)\n", name,
                   to_string(choice.engine), mode);
  };
  check("--stream-rows", Engine::Streamed, "streamed");
  check("--stream-blocks", Engine::Streamed, "streamed");
  for (const char* name : {"--top-k", "--spectral-layers", "--hutchinson-probes"})
    check(name, Engine::MatrixFree, "matrix-free");
}

void run_analyze(const AnalyzeOptions& o) {
  RunConfig rc = resolve(o.model);
  rc.analysis.engine_request = parse_engine_request(o.mode, o.gradients_only);
  rc.analysis.progress = !o.quiet;
  rc.analysis.backend = parse_backend_kind(o.device);
  const RunBackend backend(rc.analysis.backend);  // the run's one backend, built when first asked
  // refuses bad engine options and runs that do not fit, before any work
  const EngineChoice choice = choose_engine(rc.model, rc.analysis, backend);
  check_engine_options(o, choice);
  check_outputs({{"--json", o.json}}, run_input_paths(rc));
  auto report = analyze(rc, backend, &choice);
  report["blas_kernel"] = report_kernel(report);  // what the last bits depend on (docs/report-schema.md)
  if (!o.quiet) print_report_table(std::cout, report, ::isatty(STDOUT_FILENO));
  if (!o.json.empty()) write_file_atomic(o.json, report.dump(2) + "\n");
}
}  // namespace

void setup_analyze(CLI::App& app) {
  auto opts = std::make_shared<AnalyzeOptions>();
  auto* sub = app.add_subcommand("analyze", "gradient norms and Jacobian products across depth, as a table and JSON");
  add_model_options(*sub, opts->model);
  sub->add_option("--json", opts->json, "write the report to this file (docs/report-schema.md)")->check(non_empty_path());
  sub->add_flag("--gradients-only", opts->gradients_only, "skip the explicit Jacobians (gradient norms only)");
  auto& an = opts->model.rc.analysis;  // the engine options (analyze only)
  sub->add_option("--mode", opts->mode, "explicit (dense Jacobians) | matrix-free (JVP/VJP) | streamed (exact Frobenius "
                                       "norms, no dense Jacobian) | auto (explicit if it fits in --max-memory, else streamed if its "
                                       "estimated time fits --max-time, else matrix-free)")
      ->check(CLI::IsMember({"auto", "explicit", "matrix-free", "streamed"}))->capture_default_str();
  sub->add_flag("--spectrum", an.spectrum, "explicit mode: every singular value of B_l and P_l, with summary statistics");
  sub->add_option("--top-k", an.top_k, "matrix-free: largest singular values per B_l and P_l (Lanczos; >= 1)")
      ->capture_default_str();
  sub->add_option("--spectral-layers", an.spectral_layers, "matrix-free: P_l for all | none | bottom | top | 0,6,12 (B_l: all unless none)")
      ->capture_default_str();
  sub->add_option("--hutchinson-probes", an.hutchinson_probes, "matrix-free: probes K of the Frobenius estimates (0 skips)")
      ->capture_default_str();
  sub->add_option("--stream-rows", an.stream_rows, "streamed: identity rows per chunk K (>= 1; memory grows like K*n*(d+d_ff))")
      ->capture_default_str();
  sub->add_option_function<std::string>(
         "--stream-blocks", [&an](const std::string& v) { an.stream_blocks = v == "on"; },
         "streamed: on (default) | off: also the exact ||B_l||_F of every layer (as much work again as the ||P_l||_F)")
      ->check(CLI::IsMember({"on", "off"}))->type_name("on|off");
  add_sensitivity_options(*sub, an);
  sub->add_option("--device", opts->device, "where explicit mode's products, norms and SVDs, streamed mode's VJP "
                                           "chain, or matrix-free mode's Lanczos products run: cpu | cuda (a CUDA build "
                                           "and a visible GPU; docs/cuda.md)")
      ->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  sub->add_option_function<std::string>(
         "--max-time", [&an](const std::string& v) { an.max_time_seconds = parse_duration(v, "--max-time"); },
         "auto: choose streamed mode when explicit does not fit and its estimated time is within this (e.g. 600, "
         "10m, 2h; default 10m); the estimate is printed")
      ->type_name("DURATION");
  sub->add_flag("-q,--quiet", opts->quiet, "no table, no progress");
  sub->callback([opts, sub] {
    for (const char* name : {"--mode", "--spectrum", "--top-k", "--spectral-layers", "--hutchinson-probes", "--stream-rows",
                             "--stream-blocks", "--max-time"})
      if (sub->count(name) > 0) opts->given.insert(name);
    check_sensitivity_options(*sub, opts->model.rc.analysis);
    run_analyze(*opts);
  });
}

}  // namespace gradflow::cli
