// spectrum_json.hpp — the "spectrum" object of --spectrum (explicit mode): every singular value of a Jacobian
// (descending, as a JSON array) and its summary: largest, smallest, median, and log10 of the condition number
// σ_max/σ_min over the numerical range (σ > kRankRtol·σ_max, svd.hpp: values below are rounding noise).
#pragma once
#include <nlohmann/json.hpp>

#include "gradflow/core/types.hpp"

namespace gradflow {

nlohmann::ordered_json spectrum_json(const Vec& sigma_descending);

}  // namespace gradflow
