// config_json.hpp — the report's "config": every option that shaped the numbers, so a run can be repeated.
#pragma once
#include <nlohmann/json.hpp>

#include "gradflow/analysis/options.hpp"
#include "gradflow/model/config.hpp"
#include "gradflow/model/model.hpp"

namespace gradflow {

nlohmann::ordered_json config_to_json(const Model& model, const InitConfig& init, const AnalysisOptions& opts);

}  // namespace gradflow
