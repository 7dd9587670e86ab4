// aggregate.cpp — see aggregate.hpp.
#include "gradflow/experiments/aggregate.hpp"

#include <cmath>
#include <limits>
#include <map>

#include "gradflow/report/fields.hpp"

namespace gradflow {
using Json = nlohmann::ordered_json;
using namespace fields;

namespace {

bool is_timing(const std::string& key) {
  return key.find("seconds") != std::string::npos || key.find("elapsed") != std::string::npos ||
         key.find("time") != std::string::npos;
}

// Appends (key, value) to an ordered table of value lists, remembering first-appearance order.
struct Table {
  std::vector<std::string> keys;
  std::map<std::string, std::vector<double>> values;
  void add(const std::string& k, double v) {
    auto it = values.find(k);
    if (it == values.end()) {
      keys.push_back(k);
      values[k].push_back(v);
    } else {
      it->second.push_back(v);
    }
  }
  Json stats() const {
    Json j = Json::object();
    for (const auto& k : keys) j[k] = stat_json(mean_std(values.at(k)));
    return j;
  }
};

}  // namespace

Stat mean_std(const std::vector<double>& v) {
  Stat s;
  s.n = static_cast<int>(v.size());
  if (v.empty()) return Stat{std::numeric_limits<double>::quiet_NaN(), 0, 0};
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / s.n;
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.std = s.n > 1 ? std::sqrt(ss / (s.n - 1)) : 0.0;
  return s;
}

Json stat_json(const Stat& s) { return Json{{kMean, s.mean}, {kStd, s.std}, {kN, s.n}}; }

void flatten_numbers(const Json& j, const std::string& prefix, Metrics& out) {
  if (j.is_number()) {
    out.emplace_back(prefix, j.get<double>());
    return;
  }
  if (!j.is_object()) return;  // arrays, strings, booleans, null
  for (const auto& [k, v] : j.items()) {
    if (is_timing(k)) continue;
    flatten_numbers(v, prefix.empty() ? k : prefix + "." + k, out);
  }
}

Metrics layer_metrics(const Json& layer) {
  Metrics m;
  for (const auto& [k, v] : layer.items())
    if (k != kIndex) flatten_numbers(v, k, m);
  return m;
}

Metrics scalar_metrics(const Json& report) {
  Metrics m;
  if (report.contains(kSummary)) flatten_numbers(report[kSummary], kSummary, m);
  for (const auto& [k, v] : report.items())
    if (k != kSummary && k != kConfig && k != kLayers && !is_timing(k)) flatten_numbers(v, k, m);
  if (report.contains(kLayers) && !report[kLayers].empty()) {
    for (const auto& [k, v] : layer_metrics(report[kLayers].front())) m.emplace_back(kBottom + ("." + k), v);
    for (const auto& [k, v] : layer_metrics(report[kLayers].back())) m.emplace_back(kTop + ("." + k), v);
  }
  return m;
}

Json aggregate_seeds(const std::vector<const Json*>& reports) {
  size_t depth = 0;
  for (const Json* r : reports) depth = std::max(depth, r->contains(kLayers) ? (*r)[kLayers].size() : size_t{0});
  std::vector<Table> layers(depth);
  Table scalars;
  for (const Json* r : reports) {
    for (size_t l = 0; r->contains(kLayers) && l < (*r)[kLayers].size(); ++l)
      for (const auto& [k, v] : layer_metrics((*r)[kLayers][l])) layers[l].add(k, v);
    for (const auto& [k, v] : scalar_metrics(*r)) scalars.add(k, v);
  }
  Json out;
  out[kLayers] = Json::array();
  for (size_t l = 0; l < depth; ++l) {
    Json layer;
    layer[kIndex] = l;
    const Json stats = layers[l].stats();
    for (const auto& [k, v] : stats.items()) layer[k] = v;
    out[kLayers].push_back(std::move(layer));
  }
  out[kScalars] = scalars.stats();
  return out;
}

double power_law_exponent(const std::vector<double>& x, const std::vector<double>& y) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (x.size() != y.size() || x.size() < 2) return nan;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double m = static_cast<double>(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] > 0) || !(y[i] > 0) || !std::isfinite(x[i]) || !std::isfinite(y[i])) return nan;
    const double lx = std::log(x[i]), ly = std::log(y[i]);
    sx += lx; sy += ly; sxx += lx * lx; sxy += lx * ly;
  }
  const double den = m * sxx - sx * sx;
  if (!(std::abs(den) > 1e-12 * std::max(1.0, m * sxx))) return nan;
  return (m * sxy - sx * sy) / den;
}

}  // namespace gradflow
