// auto_seeds.cpp — see auto_seeds.hpp.
#include "gradflow/experiments/auto_seeds.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gradflow/core/error.hpp"
#include "gradflow/report/fields.hpp"

namespace gradflow {
using Json = nlohmann::ordered_json;
using namespace fields;

namespace {

double num(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : std::nan("");
}

// Whether an interval [lo, hi] around `center` meets the target: relative half-width (hi − lo)/2/|center| ≤ target,
// or half-width ≤ ci_abs. Appends a line to `unmet` otherwise (an undefined interval never meets it).
void check_width(const std::string& what, double center, double lo, double hi, const AutoSeeds& a,
                 std::vector<std::string>& unmet) {
  const double half = 0.5 * (hi - lo);
  const bool ok = std::isfinite(half) && (half <= a.ci_target * std::abs(center) || (a.ci_abs > 0 && half <= a.ci_abs));
  if (ok) return;
  char buf[96];
  std::snprintf(buf, sizeof buf, " ±%.3g %% (target %.3g %%)", 100 * half / std::abs(center), 100 * a.ci_target);
  unmet.push_back(what + buf);
}

std::string group_name(const Json& g) {
  std::string s = g.value(kPlacement, "") + " L=" + std::to_string(g.value(kLayers, 0LL));
  if (g.contains(kValue)) s += " " + g.value(kParam, "") + "=" + g[kValue].get<std::string>();
  if (g.contains(kValue2)) s += " " + g.value(kParam2, "") + "=" + g[kValue2].get<std::string>();
  return s;
}

}  // namespace

void check_auto_seeds(const AutoSeeds& a) {
  require(a.ci_target > 0 && a.ci_target < 1, "--ci-target " + std::to_string(a.ci_target) + " must lie strictly "
          "between 0 and 1 (a relative half-width); fix: e.g. --ci-target 0.05 for ±5 %");
  require(a.ci_abs >= 0 && std::isfinite(a.ci_abs), "--ci-abs must be a non-negative number; fix: e.g. --ci-abs 0.01");
  require(a.batch >= 2, "--seed-batch " + std::to_string(a.batch) + " is below 2 (an interval needs two seeds); fix: "
          "e.g. --seed-batch 10");
  require(a.max_seeds >= a.batch, "--max-seeds " + std::to_string(a.max_seeds) + " is below the first batch of " +
          std::to_string(a.batch) + " seeds; fix: raise --max-seeds or lower --seed-batch");
  require(a.max_seeds <= 1000000, "--max-seeds " + std::to_string(a.max_seeds) + " is above 1000000 (the most --seeds "
          "takes); fix: e.g. --max-seeds 200");
  require(!a.metrics.empty(), "--ci-metrics is empty; fix: e.g. --ci-metrics summary.bottom_to_top_grad_ratio");
}

std::vector<std::string> auto_seeds_unmet(const Json& report, const AutoSeeds& a) {
  std::vector<std::string> unmet;
  for (const auto& g : report[kGroups])
    for (const auto& m : a.metrics) {
      require(g[kScalars].contains(m), "--ci-metrics: '" + m + "' is not a scalar metric of group " + group_name(g) +
                                           "; fix: use one of the report's scalars, e.g. summary.bottom_to_top_grad_ratio");
      const Json& s = g[kScalars][m];
      if (s.contains("geomean"))
        check_width(group_name(g) + ": " + m, num(s, "geomean"), num(s, "geo_ci_low"), num(s, "geo_ci_high"), a, unmet);
      else
        check_width(group_name(g) + ": " + m, num(s, kMean), num(s, "ci_low"), num(s, "ci_high"), a, unmet);
    }
  for (const char* list : {kRatios, kComparisons}) {
    if (!report.contains(list)) continue;
    for (const auto& e : report[list]) {
      const std::string name = std::string(list) == kRatios
                                   ? e[kNumerator].get<std::string>() + "/" + e[kDenominator].get<std::string>() +
                                         " L=" + std::to_string(e[kLayers].get<long long>())
                                   : e[kPlacement].get<std::string>() + " " + e[kAxis].get<std::string>() + " " +
                                         e[kNumerator].dump() + "/" + e[kDenominator].dump();
      for (const auto& m : a.metrics) {
        if (!e[kMetrics].contains(m) || !e[kMetrics][m].contains(kPaired)) continue;
        const Json& p = e[kMetrics][m][kPaired];
        if (e[kMetrics][m].value(kVerdict, "") == "equal") continue;  // identical seeds: nothing to estimate
        check_width(name + ": " + m + " (paired)", num(p, "estimate"), num(p, "ci_low"), num(p, "ci_high"), a, unmet);
      }
    }
  }
  return unmet;
}

Json auto_seeds_json(const AutoSeeds& a, int batches, const std::vector<std::string>& unmet) {
  Json j;
  j["ci_target"] = a.ci_target;
  if (a.ci_abs > 0) j["ci_abs"] = a.ci_abs;
  j["max_seeds"] = a.max_seeds;
  j["batch"] = a.batch;
  j["metrics"] = a.metrics;
  j["batches"] = batches;
  j["target_met"] = unmet.empty();
  const size_t shown = std::min<size_t>(unmet.size(), 10);
  j["unmet"] = std::vector<std::string>(unmet.begin(), unmet.begin() + static_cast<std::ptrdiff_t>(shown));
  if (unmet.size() > shown) j["unmet_more"] = unmet.size() - shown;
  j["rule"] = "seeds added in batches until every half-width meets the target (relative, of the geometric mean for "
              "positive quantities, or --ci-abs), for every group and every paired comparison of the metrics; the "
              "rule reads widths only, never a verdict";
  return j;
}

}  // namespace gradflow
