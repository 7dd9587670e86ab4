// config_json.hpp — the model part of a report's "config": every option that shaped the model and its
// initialization, keys as the command-line flags (with underscores), so a run can be repeated. analyze adds its
// engine's options (run/run_config.hpp), train its task and optimizer (train/train.cpp).
#pragma once
#include <nlohmann/json.hpp>

#include "gradflow/model/config.hpp"
#include "gradflow/model/model.hpp"

namespace gradflow {

// gradflow_version, placement, layers, d_model, heads, d_ff, seq_len, activation, causal, norm, norm_eps,
// final_norm, residual_scale, the placement's own options as resolved (placement.hpp: config_fields), init,
// init_scale, init_scale_value, seed.
nlohmann::ordered_json model_config_json(const Model& model, const InitConfig& init, Index seq_len);

}  // namespace gradflow
