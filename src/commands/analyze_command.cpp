// analyze_command.cpp — see analyze_command.hpp.
#include "gradflow/commands/analyze_command.hpp"

#include <cstdio>

#include "gradflow/core/error.hpp"
#include "gradflow/experiments/runner.hpp"
#include "gradflow/run/analysis_options.hpp"
#include "gradflow/run/engine.hpp"
#include "gradflow/run/model_options.hpp"
#include "gradflow/run/time_estimate.hpp"

namespace gradflow {
namespace {

// An engine option the chosen engine does not read is refused when the engine was asked for (--mode explicit,
// --gradients-only), and noted when --mode auto chose it: nothing is ignored silently.
void check_engine_options(const AnalyzeRequest& o, const EngineChoice& choice) {
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
  for (const char* name : {"--top-k", "--spectral-layers", "--hutchinson-probes", "--probe-chunk"})
    check(name, Engine::MatrixFree, "matrix-free");
}

}  // namespace

void add_analyze_options(CLI::App& sub, AnalyzeRequest& r) {
  add_model_options(sub, r.model);
  sub.add_flag("--gradients-only", r.gradients_only, "skip the explicit Jacobians (gradient norms only)");
  auto& an = r.model.rc.analysis;  // the engine options (analyze only)
  sub.add_option("--mode", r.mode, "explicit (dense Jacobians) | matrix-free (JVP/VJP) | streamed (exact Frobenius "
                                       "norms, no dense Jacobian) | auto (explicit if it fits in --max-memory, else streamed if its "
                                       "estimated time fits --max-time, else matrix-free)")
      ->check(CLI::IsMember({"auto", "explicit", "matrix-free", "streamed"}))->capture_default_str();
  sub.add_flag("--spectrum", an.spectrum, "explicit mode: every singular value of B_l and P_l, with summary statistics");
  sub.add_option("--top-k", an.top_k, "matrix-free: largest singular values per B_l and P_l (Lanczos; >= 1)")
      ->capture_default_str();
  sub.add_option("--spectral-layers", an.spectral_layers, "matrix-free: P_l for all | none | bottom | top | 0,6,12 (B_l: all unless none)")
      ->capture_default_str();
  sub.add_option("--hutchinson-probes", an.hutchinson_probes, "matrix-free: probes K of the Frobenius estimates (0 skips)")
      ->capture_default_str();
  sub.add_option("--probe-chunk", an.probe_chunk, "matrix-free: Hutchinson probes pushed down together (>= 1; memory "
                                                  "grows like C*n*(d+d_ff); the standard error uses the pairs within a "
                                                  "chunk; analyze --plan splits the probes in these chunks)")
      ->capture_default_str();
  sub.add_option("--stream-rows", an.stream_rows, "streamed: identity rows per chunk K (>= 1; memory grows like K*n*(d+d_ff))")
      ->capture_default_str();
  sub.add_option_function<std::string>(
         "--stream-blocks", [&an](const std::string& v) { an.stream_blocks = v == "on"; },
         "streamed: also the exact ||B_l||_F of every layer: on (default; as much work again as the ||P_l||_F) | "
         "off (the ||P_l||_F alone)")
      ->check(CLI::IsMember({"on", "off"}))->type_name("on|off");
  add_sensitivity_options(sub, an);
  sub.add_option("--device", r.device, "where explicit mode's products, norms and SVDs, streamed mode's VJP "
                                           "chain, or matrix-free mode's Lanczos products run: cpu | cuda (a CUDA build "
                                           "and a visible GPU; docs/cuda.md)")
      ->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  sub.add_option_function<std::string>(
         "--max-time", [&an](const std::string& v) { an.max_time_seconds = parse_duration(v, "--max-time"); },
         "auto: choose streamed mode when explicit does not fit and its estimated time is within this (e.g. 600, "
         "10m, 2h; default 10m); the estimate is printed")
      ->type_name("DURATION");
}

void note_given_analyze_options(const CLI::App& sub, AnalyzeRequest& r) {
  for (const char* name : {"--mode", "--spectrum", "--top-k", "--spectral-layers", "--hutchinson-probes", "--probe-chunk",
                           "--stream-rows",
                           "--stream-blocks", "--max-time"})
    if (sub.count(name) > 0) r.given.insert(name);
  check_sensitivity_options(sub, r.model.rc.analysis);
}

nlohmann::ordered_json run_analyze_request(const AnalyzeRequest& r, const std::function<void(RunConfig&)>& rc_hook) {
  RunConfig rc = resolve(r.model);
  if (rc_hook) rc_hook(rc);
  rc.analysis.engine_request = parse_engine_request(r.mode, r.gradients_only);
  rc.analysis.progress = !r.quiet;
  rc.analysis.backend = parse_backend_kind(r.device);
  const RunBackend backend(rc.analysis.backend);  // the run's one backend, built when first asked
  // refuses bad engine options and runs that do not fit, before any work
  const EngineChoice choice = choose_engine(rc.model, rc.analysis, backend);
  check_engine_options(r, choice);
  auto report = analyze(rc, backend, &choice);
  report["blas_kernel"] = report_kernel(report);  // what the last bits depend on (docs/report-schema.md)
  return report;
}

}  // namespace gradflow
