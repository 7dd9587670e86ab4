// aggregate.cpp — see aggregate.hpp.
#include "gradflow/experiments/aggregate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "gradflow/core/error.hpp"
#include "gradflow/experiments/statistics.hpp"
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
    for (const auto& k : keys) j[k] = summary_json(values.at(k));
    return j;
  }
};

}  // namespace

namespace {
Stat plain_mean_std(const std::vector<double>& v) {
  Stat s;
  s.n = static_cast<int>(v.size());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / s.n;
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.std = s.n > 1 ? std::sqrt(ss / (s.n - 1)) : 0.0;
  return s;
}
}  // namespace

Stat mean_std(const std::vector<double>& v) {
  if (v.empty()) return Stat{std::numeric_limits<double>::quiet_NaN(), 0, 0};
  Stat s = plain_mean_std(v);
  bool finite = true;
  double largest = 0;
  for (double x : v) {
    finite = finite && std::isfinite(x);
    largest = std::max(largest, std::abs(x));
  }
  if ((std::isfinite(s.mean) && std::isfinite(s.std)) || !finite) return s;
  // the sum or a square overflowed for finite values: the same on the values scaled by 2^-e (max|x| = f·2^e, exact
  // but for subnormals), the results scaled back; plain sums keep every ordinary result's bits
  int e = 0;
  std::frexp(largest, &e);
  std::vector<double> scaled(v.size());
  for (size_t i = 0; i < v.size(); ++i) scaled[i] = std::ldexp(v[i], -e);
  const Stat t = plain_mean_std(scaled);
  s.mean = std::ldexp(t.mean, e);
  s.std = std::ldexp(t.std, e);
  if (!std::isfinite(s.mean) || !std::isfinite(s.std))
    throw Error("the mean or standard deviation of " + std::to_string(v.size()) + " values up to " +
                    std::to_string(largest) + " exceeds the largest double; fix: check the results for values that "
                    "large (a diverged run), and rerun with a smaller --init-scale or --residual-scale",
                ErrorKind::Numeric);
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

namespace {
// "number", "null" or "other" for every leaf path of `j` (timing fields skipped), into `out`. A list of numbers (or
// an empty list) is one leaf of its own kind, whatever its length: lists of layer indices (a --precision report's
// underflow_layers) differ between seeds by design, and no list is aggregated (flatten_numbers skips them).
void leaf_kinds(const Json& j, const std::string& path, std::map<std::string, std::string>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items())
      if (!is_timing(k)) leaf_kinds(v, path.empty() ? k : path + "." + k, out);
    return;
  }
  if (j.is_array() && std::all_of(j.begin(), j.end(), [](const Json& e) { return e.is_number(); })) {
    out[path] = "a list of numbers";
    return;
  }
  if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) leaf_kinds(j[i], path + "[" + std::to_string(i) + "]", out);
    return;
  }
  out[path] = j.is_number() ? "a number" : j.is_null() ? "null" : "not a number";
}

// The reports of one configuration's seeds have one structure (the same command on the same model): a field missing
// in one, or a number in one and a string in another, is an edited or corrupt result, refused (never dropped from n).
void check_same_structure(const std::vector<const Json*>& reports) {
  std::vector<std::map<std::string, std::string>> kinds(reports.size());
  for (size_t i = 0; i < reports.size(); ++i) {
    Json r = *reports[i];
    if (r.is_object()) r.erase(kConfig);
    leaf_kinds(r, "", kinds[i]);
  }
  const auto seed = [&](size_t i) {
    const Json& r = *reports[i];
    return r.is_object() && r.contains(kConfig) && r[kConfig].is_object() && r[kConfig].contains(kSeed)
               ? "seed " + r[kConfig][kSeed].dump()
               : "repetition " + std::to_string(i);
  };
  for (size_t i = 1; i < reports.size(); ++i)
    for (const auto* pair : {&kinds[0], &kinds[i]})
      for (const auto& [path, kind] : *pair) {
        const auto a = kinds[0].find(path), b = kinds[i].find(path);
        const std::string ka = a == kinds[0].end() ? "missing" : a->second;
        const std::string kb = b == kinds[i].end() ? "missing" : b->second;
        const bool differ = ka != kb && !((ka == "a number" && kb == "null") || (ka == "null" && kb == "a number"));
        require(!differ, "the results of one configuration disagree at '" + path + "': " + ka + " for " + seed(0) +
                             ", " + kb + " for " + seed(i) + " (an edited or corrupt result); fix: rerun the task "
                             "that wrote the wrong one (delete its result first)");
      }
}
}  // namespace

Json aggregate_seeds(const std::vector<const Json*>& reports) {
  check_same_structure(reports);
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
