// analyze.cpp — see analyze.hpp.
#include "gradflow/run/analyze.hpp"

#include <chrono>
#include <cstdio>
#include <optional>

#include "gradflow/backend/backend.hpp"
#include "gradflow/model/block_weights.hpp"
#include "gradflow/run/analysis.hpp"
#include "gradflow/run/context.hpp"
#include "gradflow/run/engine.hpp"
#include "gradflow/run/numeric_fix.hpp"
#include "gradflow/run/precision_compare.hpp"
#include "gradflow/run/run_config.hpp"
#include "gradflow/run/run_inputs.hpp"
#include "gradflow/core/error.hpp"

namespace gradflow {

nlohmann::ordered_json analyze(const RunConfig& rc) { return analyze(rc, RunBackend(rc.analysis.backend)); }

nlohmann::ordered_json analyze(const RunConfig& rc, const RunBackend& backend, const EngineChoice* chosen) {
  const auto t0 = std::chrono::steady_clock::now();
  rc.model.validate();
  // validates and refuses what does not fit
  const EngineChoice choice = chosen ? *chosen : choose_engine(rc.model, rc.analysis, backend);
  // gradients only from a seeded init: the weight matrices one block at a time (the same report, a block's memory)
  const bool per_block = weights_per_block(rc.model, rc.analysis, choice.engine, !rc.weights.empty());
  Model model(rc.model, cpu_kernels(), per_block ? WeightResidency::PerBlock : WeightResidency::Resident);
  AnalysisOptions opts = rc.analysis;
  opts.engine = choice.engine;
  opts.probe_seed = rc.init.seed;
  // the report needs only their norms: never 600 MiB of gradients at once (but --precision compares them)
  opts.keep_param_grads = opts.precision != Precision::F64;
  // the run's backend (built here, or already by the engine choice), and what the analyses cannot run on it, both
  // refused before the files are read
  const std::shared_ptr<const Backend> be = backend.get();
  check_analyses(model, opts, *be);
  const RunInputs in = prepare_run(rc, model);  // --weights/--input/--cotangent, or --init and seeded draws
  const std::optional<BlockWeights> weights = per_block ? std::optional<BlockWeights>(std::in_place, model, rc.init)
                                                        : std::nullopt;
  if (opts.spectrum && opts.engine != Engine::Explicit && opts.progress)
    std::fprintf(stderr, "gradflow: note: --spectrum skipped: %s\n", choice.reason.c_str());
  const auto t1 = std::chrono::steady_clock::now();
  // NaN/Inf errors name the fix that fits where this run's numbers came from (numeric_fix.hpp)
  const AnalysisContext ctx = with_nonfinite_fix(rc, in.x0, [&] {
    return AnalysisContext(model, in.x0, opts, be, in.cotangent_or_null(), rc.init.seed, in.lm_loss_or_null(),
                           weights ? &weights->hook() : nullptr);
  });
  const auto t2 = std::chrono::steady_clock::now();
  Json body = with_nonfinite_fix(rc, in.x0, [&] { return run_analyses(ctx); });
  const auto t3 = std::chrono::steady_clock::now();
  if (opts.precision != Precision::F64)
    add_precision_comparison(ctx, rc.init, per_block, in.x0, in.lm_loss_or_null(), body);
  const auto t4 = std::chrono::steady_clock::now();
  Json report;
  report["config"] = run_config_json(model, rc, &choice);
  if (opts.backend != BackendKind::Cpu) report["config"]["device_description"] = be->description();
  for (auto& [k, v] : body.items()) report[k] = v;
  report["elapsed_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  report["timing_seconds"] = Json{{"model_and_init", secs(t0, t1)}, {"forward_backward", secs(t1, t2)},
                                  {"analyses", secs(t2, t3)}};
  if (opts.precision != Precision::F64) report["timing_seconds"]["precision"] = secs(t3, t4);
  return report;
}

}  // namespace gradflow
