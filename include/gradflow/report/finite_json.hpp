// finite_json.hpp — a number for a JSON report: JSON has no NaN or Inf, so a non-finite value is written as null
// (the analyze, train and train-sweep reports all follow this rule).
#pragma once
#include <cmath>

#include <nlohmann/json.hpp>

namespace gradflow {

inline nlohmann::ordered_json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

}  // namespace gradflow
