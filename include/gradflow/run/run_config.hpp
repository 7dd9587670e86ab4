// run_config.hpp — the "config" of an analyze report, written in this one place: the model and its
// initialization (report/config_json.hpp), the loss, the engine chosen and why, the engine's own options, and
// the files the run read.
#pragma once
#include <nlohmann/json.hpp>

#include "gradflow/run/analyze.hpp"
#include "gradflow/run/engine.hpp"
#include "gradflow/model/model.hpp"

namespace gradflow {

// choice = nullptr: before the engine is chosen (what a --resume file must have been computed with); "mode" then
// records the request (auto, explicit, matrix-free, gradients-only) and no engine fields or file paths follow, but the
// files' contents do (weights_sha256, input_sha256, cotangent_sha256; the token ids themselves).
nlohmann::ordered_json run_config_json(const Model& model, const RunConfig& rc, const EngineChoice* choice);

}  // namespace gradflow
