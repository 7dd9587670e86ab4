// claim_verdicts.cpp — see claim_verdicts.hpp.
#include "gradflow/experiments/claim_verdicts.hpp"

#include <cmath>
#include <limits>
#include <optional>

#include "gradflow/core/error.hpp"
#include "gradflow/experiments/spec.hpp"
#include "gradflow/experiments/statistics.hpp"
#include "gradflow/report/fields.hpp"

namespace gradflow {
using Json = nlohmann::ordered_json;
using namespace fields;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// A group as its coordinates: placement, depth, swept values (text as the report writes them; empty when not swept).
struct Coord {
  std::string placement, value, value2;
  long long layers = -1;
  bool operator==(const Coord& o) const {
    return placement == o.placement && layers == o.layers && value == o.value && value2 == o.value2;
  }
};

Coord group_coord(const Json& g) {
  return {g.value(kPlacement, ""), g.value(kValue, ""), g.value(kValue2, ""), g.value(kLayers, -1LL)};
}

bool selects(const Json& sel, const Coord& c) {
  for (const auto& [k, v] : sel.items()) {
    if (k == kPlacement && v.get<std::string>() != c.placement) return false;
    if (k == kLayers && v.get<long long>() != c.layers) return false;
    if (k == kValue && spec_value_text(v) != c.value) return false;
    if (k == kValue2 && spec_value_text(v) != c.value2) return false;
  }
  return true;
}

// The one group `sel` names.
const Json& find_group(const Json& report, const Json& sel, const std::string& where) {
  const Json* found = nullptr;
  int count = 0;
  for (const auto& g : report[kGroups])
    if (selects(sel, group_coord(g))) {
      found = &g;
      ++count;
    }
  require(count == 1, where + ": " + sel.dump() + (count == 0 ? " names no group of the report" : " names " +
                          std::to_string(count) + " groups of the report (add layers or value)") + kVerdictFix);
  return *found;
}

// The two groups a ratios or comparisons entry compares, numerator first.
std::pair<Coord, Coord> entry_coords(const Json& e, const Json& report, bool ratio) {
  if (ratio) {
    Coord a{e[kNumerator].get<std::string>(), e.value(kValue, ""), e.value(kValue2, ""), e[kLayers].get<long long>()};
    Coord b = a;
    b.placement = e[kDenominator].get<std::string>();
    return {a, b};
  }
  Coord base{e[kPlacement].get<std::string>(), "", "", -1};
  const Json& at = e[kAt];
  const std::string param = report.value(kParam, ""), param2 = report.value(kParam2, "");
  if (at.contains(kLayers)) base.layers = at[kLayers].get<long long>();
  if (!param.empty() && at.contains(param)) base.value = at[param].get<std::string>();
  if (!param2.empty() && at.contains(param2)) base.value2 = at[param2].get<std::string>();
  Coord a = base, b = base;
  const std::string axis = e[kAxis].get<std::string>();
  if (axis == kLayers) {
    a.layers = e[kNumerator].get<long long>();
    b.layers = e[kDenominator].get<long long>();
  } else if (axis == param2 && !param2.empty()) {
    a.value2 = e[kNumerator].get<std::string>();
    b.value2 = e[kDenominator].get<std::string>();
  } else {
    a.value = e[kNumerator].get<std::string>();
    b.value = e[kDenominator].get<std::string>();
  }
  return {a, b};
}

// An interval in its working scale (ln for ratios and geometric means): centre ± half.
struct Scaled {
  double center = kNaN, half = kNaN, reference = 0;
  int n = 0;
  bool log = false;
  std::string by;
};

double num(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : kNaN;
}

Scaled from_interval(double estimate, double low, double high, int n, bool log, double reference, std::string by) {
  Scaled s;
  const auto w = [log](double x) { return log ? std::log(x) : x; };
  s.center = w(estimate);
  s.half = 0.5 * (w(high) - w(low));
  s.reference = w(reference);
  s.n = n;
  s.log = log;
  s.by = std::move(by);
  return s;
}

double t_quantile_for(double level, int n) { return student_t_quantile(0.5 * (1 + level), n - 1.0); }

// The smallest number of seeds at which a t interval with this spread would exclude the reference; null when it never
// would (the estimate sits at the reference) or more than a million seeds would be needed.
Json seeds_needed(const Scaled& s, double level) {
  const double gap = std::abs(s.center - s.reference);
  if (!(gap > 0) || !std::isfinite(s.half) || s.n < 2) return Json();
  const double sd = s.half * std::sqrt(static_cast<double>(s.n)) / t_quantile_for(level, s.n);
  const auto decides = [&](long long m) {
    return t_quantile_for(level, static_cast<int>(m)) * sd / std::sqrt(static_cast<double>(m)) < gap;
  };
  long long lo = s.n, hi = s.n;
  while (!decides(hi)) {
    lo = hi;
    hi *= 2;
    if (hi > 1000000) return Json();
  }
  while (hi - lo > 1) {
    const long long mid = lo + (hi - lo) / 2;
    (decides(mid) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace

Json decide_claims(const Json& spec, const Json& report) {
  Json out = Json::array();
  if (!spec.is_object() || !spec.contains("verdicts")) return out;
  const Json& list = spec["verdicts"];
  check_verdict_specs(list, "the spec");
  const double report_level = report.contains(kStatistics) ? report[kStatistics].value("level", kDefaultLevel)
                                                           : kDefaultLevel;
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& v = list[i];
    const std::string where = "verdicts[" + std::to_string(i) + "] (\"" + v["says"].get<std::string>() + "\")";
    const std::string metric = v["metric"].get<std::string>();
    const double level = v.value("level", kDefaultLevel);
    Scaled s;
    if (v.contains("group")) {
      const Json& g = find_group(report, v["group"], where);
      require(g[kScalars].contains(metric), where + ": the report has no scalar metric '" + metric +
                                                "'; fix: use one of the group's scalars (e.g. summary.bottom_to_top_grad_ratio)");
      const Json& m = g[kScalars][metric];
      const double than = v["than"].get<double>();
      const int n = m[kN].get<int>();
      if (m.contains("geomean") && than > 0)
        s = from_interval(num(m, "geomean"), num(m, "geo_ci_low"), num(m, "geo_ci_high"), n, true, than,
                          "geometric mean");
      else
        s = from_interval(num(m, kMean), num(m, "ci_low"), num(m, "ci_high"), n, false, than, "mean");
    } else {
      const Coord a = group_coord(find_group(report, v["numerator"], where));
      const Coord b = group_coord(find_group(report, v["denominator"], where));
      const Json* entry = nullptr;
      bool reversed = false;
      for (const char* list_key : {kRatios, kComparisons}) {
        if (!report.contains(list_key)) continue;
        for (const auto& e : report[list_key]) {
          const auto [x, y] = entry_coords(e, report, std::string(list_key) == kRatios);
          if ((x == a && y == b) || (x == b && y == a)) {
            entry = &e;
            reversed = x == b;
          }
        }
      }
      require(entry != nullptr, where + ": the two groups differ in more than one of placement, depth and the swept "
                                        "values, so the report pairs them nowhere; fix: compare groups that differ in one");
      require((*entry)[kMetrics].contains(metric) && (*entry)[kMetrics][metric].contains(kPaired),
              where + ": the report has no paired comparison of '" + metric +
                  "' for this pair; fix: use a scalar metric of its groups (e.g. summary.bottom_to_top_grad_ratio)");
      const Json& m = (*entry)[kMetrics][metric];
      const Json& p = m[kPaired];
      const bool ratio = p.value("by", "") == "ratio";
      double est = num(p, "estimate"), lo = num(p, "ci_low"), hi = num(p, "ci_high");
      if (reversed) {
        if (ratio) {
          const double l = 1 / hi, h = 1 / lo;
          est = 1 / est, lo = l, hi = h;
        } else {
          const double l = -hi, h = -lo;
          est = -est, lo = l, hi = h;
        }
      }
      // the reference: "than" (a ratio's, e.g. 0.01 for "A below 1/100 of B"; a difference's), else 1 (0)
      const double reference = v.value("than", ratio ? 1.0 : 0.0);
      require(!ratio || reference > 0, where + ": \"than\" " + std::to_string(reference) + " for a ratio of positive "
                                           "values must be positive; fix: e.g. \"than\": 0.01");
      s = from_interval(est, lo, hi, m[kN].get<int>(), ratio, reference, ratio ? "paired ratio" : "paired difference");
    }
    if (level != report_level && s.n >= 2)
      s.half *= t_quantile_for(level, s.n) / t_quantile_for(report_level, s.n);
    const bool less = v["expect"] == "less";
    const double lo = s.center - s.half, hi = s.center + s.half;
    std::string verdict = "undetermined";
    if (std::isfinite(s.half)) {
      if (less ? hi < s.reference : lo > s.reference) verdict = "holds";
      else if (less ? lo > s.reference : hi < s.reference) verdict = "fails";
    }
    const auto back = [&](double x) { return s.log ? std::exp(x) : x; };
    const auto finite = [](double x) { return std::isfinite(x) ? Json(x) : Json(); };
    Json r;
    r["says"] = v["says"];
    r["metric"] = metric;
    r["expect"] = v["expect"];
    r["level"] = level;
    r["by"] = s.by;
    r["reference"] = back(s.reference);
    r["n"] = s.n;
    r["estimate"] = finite(back(s.center));
    r["ci_low"] = finite(back(lo));
    r["ci_high"] = finite(back(hi));
    r["verdict"] = verdict;
    r["seeds_needed"] = verdict == "undetermined" ? seeds_needed(s, level) : Json();
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace gradflow
