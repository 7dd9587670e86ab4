// analyze.cpp — see analyze.hpp.
#include "gradflow/analysis/analyze.hpp"

#include <chrono>
#include <cstdio>

#include "gradflow/analysis/analysis.hpp"
#include "gradflow/analysis/context.hpp"
#include "gradflow/analysis/run_inputs.hpp"
#include "gradflow/error.hpp"
#include "gradflow/matrix_free/mode.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/report/config_json.hpp"

namespace gradflow {

void check_memory(const RunConfig& rc) {
  require(rc.analysis.seq_len > 0, "--seq-len must be positive (got " + std::to_string(rc.analysis.seq_len) +
                                       "); fix: e.g. --seq-len 16");
  const ModeChoice mode = choose_mode(rc.model, rc.analysis);  // also validates --mode, --top-k, ...
  require(!(rc.analysis.spectrum && rc.analysis.mode == "matrix-free"),
          "--spectrum needs the full spectra of explicit mode; fix: drop --spectrum or use --mode explicit/auto");
  const double budget = rc.analysis.max_memory_bytes > 0 ? rc.analysis.max_memory_bytes : default_max_memory();
  if (mode.mode != "explicit") {
    const Index probes = mode.mode == "matrix-free" ? rc.analysis.hutchinson_probes : 0;
    const double need = streaming_memory_estimate(rc.model, rc.analysis.seq_len, probes);
    require(need <= budget, mode.mode + " mode keeps " + std::to_string(rc.model.heads) + " attention matrices of (" +
                                std::to_string(rc.analysis.seq_len) + ")^2 entries per layer and needs about " +
                                format_bytes(need) + ", more than the " + format_bytes(budget) +
                                " allowed; fix: lower --seq-len or --layers, or raise --max-memory");
    return;
  }
  const double need = explicit_memory_estimate(rc.model, rc.analysis.seq_len);
  require(need <= budget, "explicit Jacobians of (n*d)^2 = (" + std::to_string(rc.analysis.seq_len * rc.model.d_model) +
                              ")^2 entries need about " + format_bytes(need) + ", more than the " + format_bytes(budget) +
                              " allowed; fix: lower --seq-len or --d-model, or raise --max-memory");
}

nlohmann::ordered_json analyze(const RunConfig& rc) {
  const auto t0 = std::chrono::steady_clock::now();
  rc.model.validate();
  check_memory(rc);
  Model model(rc.model);
  const RunInputs in = prepare_run(rc, model);  // --weights/--input/--cotangent, or --init and seeded draws
  const ModeChoice mode = choose_mode(rc.model, rc.analysis);
  AnalysisOptions opts = rc.analysis;
  apply_mode(mode, opts);
  opts.probe_seed = rc.init.seed;
  opts.keep_param_grads = false;  // the report needs only their norms: never 600 MiB of gradients at once
  if (opts.spectrum && !opts.jacobians && opts.progress)
    std::fprintf(stderr, "gradflow: note: --spectrum skipped: %s\n", mode.reason.c_str());
  const auto t1 = std::chrono::steady_clock::now();
  AnalysisContext ctx(model, in.x0, opts, in.cotangent_or_null(), rc.init.seed);
  const auto t2 = std::chrono::steady_clock::now();
  Json body = run_analyses(ctx);
  const auto t3 = std::chrono::steady_clock::now();
  Json report;
  report["config"] = config_to_json(model, rc.init, opts);
  add_mode_to_config(mode, opts, report["config"]);
  for (const auto& [key, path] : {std::pair<const char*, const std::string&>{"weights", rc.weights},
                                  {"input", rc.input}, {"cotangent", rc.cotangent}})
    if (!path.empty()) report["config"][key] = path;
  for (auto& [k, v] : body.items()) report[k] = v;
  report["elapsed_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  report["timing_seconds"] = Json{{"model_and_init", secs(t0, t1)}, {"forward_backward", secs(t1, t2)},
                                  {"analyses", secs(t2, t3)}};
  return report;
}

}  // namespace gradflow
