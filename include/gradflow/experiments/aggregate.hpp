// aggregate.hpp — numbers out of analyze reports, and their mean and standard deviation over seeds.
// Per-layer metrics are the numeric fields of layers[l], flattened with dots ("grad_norm",
// "param_grad_norms.linear2.weight", "block_jacobian.spectral_norm"); strings and arrays are skipped.
// Scalar metrics of one report: every numeric summary.* ("summary.bottom_to_top_grad_ratio"), the top-level
// numbers (output_grad_norm, loss, ...; never timings), and the bottom and top layer's metrics ("bottom.grad_norm",
// "top.param_grad_norms.linear2.weight") so runs of different depths can be compared.
// std is the sample standard deviation (divide by n − 1; 0 when n = 1). Values are summed in seed order.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gradflow {

using Metrics = std::vector<std::pair<std::string, double>>;  // in report order

struct Stat {
  double mean = 0, std = 0;
  int n = 0;
};

Stat mean_std(const std::vector<double>& values);
nlohmann::ordered_json stat_json(const Stat& s);  // {"mean": .., "std": .., "n": ..}

// Numeric leaves of `j` as "prefix.a.b" (arrays, strings, booleans and timing fields skipped).
void flatten_numbers(const nlohmann::ordered_json& j, const std::string& prefix, Metrics& out);
Metrics layer_metrics(const nlohmann::ordered_json& layer);
Metrics scalar_metrics(const nlohmann::ordered_json& report);

// The summary over `reports` (the seeds of one configuration), metric by metric, keys in order of first appearance:
// {"layers": [{"index": l, METRIC: SUMMARY, ...}], "scalars": {METRIC: SUMMARY}}, SUMMARY statistics.hpp's
// summary_json (mean, std, n, se, the t interval, median, and the geometric mean and interval of positive metrics).
// A metric missing from some seeds gets a smaller n.
nlohmann::ordered_json aggregate_seeds(const std::vector<const nlohmann::ordered_json*>& reports);

// Least-squares slope of ln y against ln x (power-law exponent k in y ≈ c·x^k); NaN when fewer than two
// distinct x or any x, y ≤ 0 or non-finite.
double power_law_exponent(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace gradflow
