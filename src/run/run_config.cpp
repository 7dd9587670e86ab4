// run_config.cpp — see run_config.hpp.
#include "gradflow/run/run_config.hpp"

#include "gradflow/report/config_json.hpp"
#include "gradflow/report/fields.hpp"

namespace gradflow {

nlohmann::ordered_json run_config_json(const Model& model, const RunConfig& rc, const EngineChoice* choice) {
  const AnalysisOptions& opts = rc.analysis;
  nlohmann::ordered_json j = model_config_json(model, rc.init, opts.seq_len);
  j[fields::kLoss] = opts.loss;
  j[fields::kMode] = choice ? to_string(choice->engine) : to_string(opts.engine_request);
  j["parameters"] = model.params().numel();
  if (!choice) return j;
  j["mode_reason"] = choice->reason;
  j["explicit_memory_estimate_bytes"] = choice->explicit_bytes;
  j["max_memory_bytes"] = choice->budget_bytes;
  if (choice->engine == Engine::Explicit) j["spectrum"] = opts.spectrum;
  if (choice->engine == Engine::MatrixFree) {
    j["top_k"] = opts.top_k;
    j["spectral_layers"] = opts.spectral_layers;
    j["hutchinson_probes"] = opts.hutchinson_probes;
  }
  for (const auto& [key, path] : {std::pair<const char*, const std::string&>{"weights", rc.weights},
                                  {"input", rc.input}, {"cotangent", rc.cotangent}})
    if (!path.empty()) j[key] = path;
  return j;
}

}  // namespace gradflow
