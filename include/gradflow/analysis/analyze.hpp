// analyze.hpp — the library entry point behind `gradflow analyze`: build a model from options, initialize
// it, run it on its input and return the whole report (config + every registered analysis).
// compare, sweep and the API example call this too.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "gradflow/analysis/options.hpp"
#include "gradflow/model/config.hpp"

namespace gradflow {

struct RunConfig {
  ModelConfig model;
  InitConfig init;
  AnalysisOptions analysis;
};

// Refuses (Error, exit code 2) a run whose explicit matrices would exceed the memory budget, before
// allocating anything large.
void check_explicit_memory(const RunConfig& rc);

// The full report: {"config": ..., "layers": [...], "output_grad_norm": ..., "summary": {...}, ...}.
nlohmann::ordered_json analyze(const RunConfig& rc);

}  // namespace gradflow
