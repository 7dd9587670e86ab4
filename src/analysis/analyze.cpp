// analyze.cpp — see analyze.hpp.
#include "gradflow/analysis/analyze.hpp"

#include <chrono>

#include "gradflow/analysis/analysis.hpp"
#include "gradflow/analysis/context.hpp"
#include "gradflow/error.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/report/config_json.hpp"

namespace gradflow {

void check_explicit_memory(const RunConfig& rc) {
  require(rc.analysis.seq_len > 0, "--seq-len must be positive (got " + std::to_string(rc.analysis.seq_len) +
                                       "); fix: e.g. --seq-len 16");
  if (!rc.analysis.jacobians) return;
  const double need = explicit_memory_estimate(rc.model, rc.analysis.seq_len);
  const double budget = rc.analysis.max_memory_bytes > 0 ? rc.analysis.max_memory_bytes : default_max_memory();
  require(need <= budget, "explicit Jacobians of (n*d)^2 = (" + std::to_string(rc.analysis.seq_len * rc.model.d_model) +
                              ")^2 entries need about " + format_bytes(need) + ", more than the " + format_bytes(budget) +
                              " allowed; fix: lower --seq-len or --d-model, or raise --max-memory");
}

nlohmann::ordered_json analyze(const RunConfig& rc) {
  const auto t0 = std::chrono::steady_clock::now();
  rc.model.validate();
  check_explicit_memory(rc);
  Model model(rc.model);
  initialize(model, rc.init);
  const Mat x0 = random_normal(rc.init.seed, "input", rc.analysis.seq_len, rc.model.d_model);
  profile_initialization(model, x0);  // Admin's ω (data-dependent init); no-op otherwise
  AnalysisContext ctx(model, x0, rc.analysis, nullptr, rc.init.seed);
  Json body = run_analyses(ctx);
  Json report;
  report["config"] = config_to_json(model, rc.init, rc.analysis);
  for (auto& [k, v] : body.items()) report[k] = v;
  report["elapsed_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

}  // namespace gradflow
