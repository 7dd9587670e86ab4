// experiment_csv.cpp — the long CSV of a compare/sweep report (experiment.hpp: experiment_csv).
#include "gradflow/experiments/csv_writer.hpp"
#include "gradflow/experiments/experiment.hpp"
#include "gradflow/report/fields.hpp"

namespace gradflow {
using Json = nlohmann::ordered_json;
using namespace fields;

namespace {
// statistics.hpp's summary, after mean, std, n (empty where a summary lacks it: geomean of a signed metric, an interval
// of one seed); a ratio row's verdict is its paired comparison's
const char* const kIntervalColumns[] = {"se", "ci_low", "ci_high", "median", "geomean", "geo_ci_low", "geo_ci_high"};
}  // namespace

std::string experiment_csv(const Json& report) {
  const bool sweep = report.contains(kParam), two_d = report.contains(kParam2);
  std::vector<std::string> columns = {kPlacement, csv::kDepth};
  if (sweep) columns.insert(columns.end(), {kParam, kValue});
  if (two_d) columns.insert(columns.end(), {kParam2, kValue2});
  columns.insert(columns.end(), {csv::kLayer, csv::kMetric, kMean, kStd, kN});
  columns.insert(columns.end(), std::begin(kIntervalColumns), std::end(kIntervalColumns));
  columns.push_back(kVerdict);
  CsvWriter out(columns);
  auto row = [&](const std::string& placement, const Json& depth, const Json& value, const Json& value2,
                 const std::string& layer, const std::string& metric, const Json& s) {
    std::vector<std::string> cells = {csv_text(placement), std::to_string(depth.get<long long>())};
    if (sweep) cells.insert(cells.end(), {csv_text(report[kParam].get<std::string>()), csv_text(value.get<std::string>())});
    if (two_d)
      cells.insert(cells.end(), {csv_text(report[kParam2].get<std::string>()), csv_text(value2.get<std::string>())});
    cells.insert(cells.end(), {layer, csv_text(metric), csv_number(s[kMean], "nan"), csv_number(s[kStd], "nan"),
                               std::to_string(s[kN].get<int>())});
    for (const char* c : kIntervalColumns) cells.push_back(csv_number(s.value(c, Json()), ""));
    cells.push_back(csv_text(s.value(kVerdict, "")));
    out.row(cells);
  };
  for (const auto& g : report[kGroups]) {
    const Json value = g.value(kValue, std::string()), value2 = g.value(kValue2, std::string());
    for (const auto& layer : g[kPerLayer]) {
      const std::string l = std::to_string(layer[kIndex].get<int>());
      for (const auto& [k, s] : layer.items())
        if (k != kIndex) row(g[kPlacement], g[kLayers], value, value2, l, k, s);
    }
    for (const auto& [k, s] : g[kScalars].items()) row(g[kPlacement], g[kLayers], value, value2, "", k, s);
  }
  for (const auto& r : report[kRatios]) {
    const std::string p = r[kNumerator].get<std::string>() + "/" + r[kDenominator].get<std::string>();
    const Json value = r.value(kValue, std::string()), value2 = r.value(kValue2, std::string());
    for (const auto& [k, s] : r[kMetrics].items()) row(p, r[kLayers], value, value2, "", k, s);
  }
  return out.str();
}

}  // namespace gradflow
