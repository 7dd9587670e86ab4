// experiment_table.cpp — the comparison table of a compare/sweep report on stdout (experiment.hpp:
// print_experiment_table): the key scalar metrics per group and per ratio, then the fitted exponents.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "gradflow/core/utf8.hpp"
#include "gradflow/experiments/experiment.hpp"
#include "gradflow/experiments/experiment_terminal.hpp"
#include "gradflow/report/fields.hpp"

namespace gradflow {
using Json = nlohmann::ordered_json;
using namespace fields;

namespace {

// The table's columns, in order (those the report holds); a narrow table's (a projector's 80 columns).
const Metric* const kColumns[] = {&metrics::kBottomGradNorm,      &metrics::kTopGradNorm,
                                  &metrics::kGradRatio,           &metrics::kGrowthFactor,
                                  &metrics::kTopW2GradNorm,       &metrics::kTopActivationRms,
                                  &metrics::kBottomProductRmsGain, &metrics::kPerLayerRmsGainProduct};
const Metric* const kNarrowMetrics[] = {&metrics::kGradRatio, &metrics::kGrowthFactor, &metrics::kBottomGradNorm};

// A metric's column: a group's "mean±half-width" (17 characters) or a ratio's "est[low,high]>" (up to 20 in the usual
// ranges), so that every row's columns start at the same character.
constexpr size_t kCellWidth = 20;

struct Column {
  std::string metric;
  const char* label;
};

// `s` padded with spaces to `width` characters as a terminal shows them (UTF-8: "±" is one character, two bytes),
// then one space.
std::string cell(const std::string& s, size_t width) {
  const size_t shown = utf8_length(s);
  return s + std::string(width > shown ? width - shown : 0, ' ') + " ";
}

// The half-width of a summary's confidence interval (statistics.hpp); its std where it has no interval (n = 1: 0).
double half_width(const Json& s) {
  return s.contains("ci_high") && s["ci_high"].is_number() ? s["ci_high"].get<double>() - s[kMean].get<double>()
                                                            : s[kStd].get<double>();
}

// A group's cell: the mean ± the half-width of its confidence interval.
std::string pm(const Json& s) {
  if (!s.is_object() || !s[kMean].is_number()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3e±%.1e", s[kMean].get<double>(), half_width(s));
  return buf;
}

// A paired ratio's cell: the geometric mean of the per-seed ratios [its interval] and the verdict (> or < where the
// interval excludes 1, = for identical seeds, ? undetermined); the mean ratio when a value is not positive.
std::string paired_cell(const Json& s) {
  if (!s.is_object() || !s.contains(kPaired)) return pm(s);
  const Json& p = s[kPaired];
  const std::string v = s.value(kVerdict, "");
  const char* mark = v == "greater" ? ">" : v == "less" ? "<" : v == "equal" ? "=" : "?";
  const auto num = [](const Json& x) { return x.is_number() ? x.get<double>() : std::nan(""); };
  char buf[80];
  // no space inside a cell: every column starts where the groups' does (a difference is marked with its sign, d)
  if (p.value("by", "") == "ratio")
    std::snprintf(buf, sizeof buf, "%.3g[%.2g,%.2g]%s", num(p["estimate"]), num(p["ci_low"]), num(p["ci_high"]), mark);
  else
    std::snprintf(buf, sizeof buf, "d%.2g[%.2g,%.2g]%s", num(p["estimate"]), num(p["ci_low"]), num(p["ci_high"]), mark);
  return buf;
}

// The widths of the name column (placements and ratio names) and of the swept values' columns.
struct Widths {
  size_t name = 9, value = 0, value2 = 0;
};

// One row: name, depth, [swept value, [second swept value,]] then each column's cell from `stats` ("-" where
// absent): a group's mean ± interval, or (paired) a ratio's geometric mean, interval and verdict.
void print_row(std::ostream& os, const Widths& w, const std::string& name, const Json& layers, const std::string* value,
               const std::string* value2, const Json& stats, const std::vector<Column>& columns, bool paired = false) {
  os << cell(name, w.name) << cell(std::to_string(layers.get<int>()), 4);
  if (value) os << cell(*value, w.value);
  if (value2) os << cell(*value2, w.value2);
  static const Json none;
  for (const Column& c : columns) {
    const Json& s = stats.contains(c.metric) ? stats[c.metric] : none;
    os << cell(paired ? paired_cell(s) : pm(s), kCellWidth);
  }
  os << "\n";
}

}  // namespace

void print_experiment_table(std::ostream& os, const Json& report) { print_experiment_table(os, report, TerminalStyle{}); }

void print_experiment_table(std::ostream& out, const Json& report, const TerminalStyle& style) {
  std::ostringstream os;  // narrow: its prose lines wrapped at the end (the rows fit by their columns)
  const Json& cfg = report[kGroups].front()[kConfig];
  os << "gradflow " << report[kExperiment].get<std::string>() << ": d = " << cfg.value(kDModel, 0)
     << ", h = " << cfg.value(kHeads, 0) << ", n = " << cfg.value(kSeqLen, 0) << ", init " << cfg.value(kInit, "?")
     << " x" << cfg.value(kInitScale, "1") << ", " << cfg.value(kMode, "?") << ", "
     << report[kSeeds][kRepetitions].get<int>() << (report[kSeeds][kRepetitions].get<int>() == 1 ? " seed" : " seeds")
     << " (seed = " << report[kSeeds][kBaseSeed].get<uint64_t>()
     << " + r); mean ± half-width of its "
     << static_cast<int>(std::lround(100 * report.value(kStatistics, Json::object()).value("level", 0.95)))
     << " % confidence interval (Student t) over seeds\n";
  if (report[kSeeds].contains("auto")) {
    const Json& a = report[kSeeds]["auto"];
    os << "--seeds auto: " << report[kSeeds][kRepetitions].get<int>() << " seeds in " << a["batches"].get<int>()
       << (a["batches"].get<int>() == 1 ? " batch" : " batches") << "; target ±"
       << 100 * a["ci_target"].get<double>() << " % "
       << (a["target_met"].get<bool>() ? "met" : "NOT met at --max-seeds (see the report's seeds.auto.unmet)") << "\n";
  }
  std::vector<Column> columns;
  if (style.narrow) {
    for (const Metric* m : kNarrowMetrics)
      if (report[kGroups].front()[kScalars].contains(metric_name(*m))) columns.push_back({metric_name(*m), m->text});
  } else {
    for (const Metric* m : kColumns)
      if (report[kGroups].front()[kScalars].contains(metric_name(*m))) columns.push_back({metric_name(*m), m->text});
  }
  const bool sweep = report.contains(kParam), two_d = report.contains(kParam2);
  const auto ratio_name = [](const Json& r) {
    return r[kNumerator].get<std::string>() + "/" + r[kDenominator].get<std::string>();
  };
  Widths w;
  if (sweep) w.value = report[kParam].get<std::string>().size();
  if (two_d) w.value2 = report[kParam2].get<std::string>().size();
  for (const auto& g : report[kGroups]) {
    w.name = std::max(w.name, g[kPlacement].get<std::string>().size());
    if (sweep) w.value = std::max(w.value, g[kValue].get<std::string>().size());
    if (two_d) w.value2 = std::max(w.value2, g[kValue2].get<std::string>().size());
  }
  for (const auto& r : report[kRatios]) w.name = std::max(w.name, ratio_name(r).size());
  os << cell("placement", w.name) << cell("L", 4);
  if (sweep) os << cell(report[kParam].get<std::string>(), w.value);
  if (two_d) os << cell(report[kParam2].get<std::string>(), w.value2);
  for (const Column& c : columns) os << cell(c.label, kCellWidth);
  os << "\n";
  for (const auto& g : report[kGroups]) {
    const std::string value = sweep ? g[kValue].get<std::string>() : std::string();
    const std::string value2 = two_d ? g[kValue2].get<std::string>() : std::string();
    print_row(os, w, g[kPlacement].get<std::string>(), g[kLayers], sweep ? &value : nullptr,
              two_d ? &value2 : nullptr, g[kScalars], columns);
  }
  if (!report[kRatios].empty()) {
    os << "ratios at equal depth" << (two_d ? " and values" : sweep ? " and value" : "")
       << " (paired over seeds: geometric mean of the per-seed ratio [interval], > or < where the interval excludes "
          "1, ? undetermined):\n";
    for (const auto& r : report[kRatios]) {
      const std::string value = r.value(kValue, std::string()), value2 = r.value(kValue2, std::string());
      print_row(os, w, ratio_name(r), r[kLayers], sweep ? &value : nullptr, two_d ? &value2 : nullptr, r[kMetrics],
                columns, true);
    }
  }
  if (!report[kFits].empty()) {
    os << "power-law exponent k of y ~ x^k (per-seed fit, mean ± interval half-width):\n";
    for (const auto& f : report[kFits]) {
    char buf[96];
      os << cell(f[kPlacement].get<std::string>(), w.name) << cell("", 4) << "x = " << f[kX].get<std::string>();
      if (f.contains(kAt))
        for (const auto& [k, v] : f[kAt].items()) os << " at " << k << " = " << v.get<std::string>();
      os << ":";
      for (const Column& c : columns)
        if (f[kExponent].contains(c.metric)) {
          const Json& e = f[kExponent][c.metric];
          std::snprintf(buf, sizeof buf, " %s %.3f±%.3f", c.label, e[kMean].get<double>(), half_width(e));
          os << buf << ";";
        }
      os << "\n";
    }
  }
  if (report.contains(kVerdicts) && !report[kVerdicts].empty()) {
    os << "claims decided at their level (interval of the " << "estimate; holds / fails / undetermined):\n";
    for (const auto& v : report[kVerdicts]) {
      char buf[160];
      const auto num = [](const Json& x) { return x.is_number() ? x.get<double>() : std::nan(""); };
      std::snprintf(buf, sizeof buf, "  %-12s %s %.3g [%.3g, %.3g] vs %.3g at %g %%, n = %d",
                    v["verdict"].get<std::string>().c_str(), v["by"].get<std::string>().c_str(), num(v["estimate"]),
                    num(v["ci_low"]), num(v["ci_high"]), num(v["reference"]), 100 * v["level"].get<double>(),
                    v["n"].get<int>());
      os << buf;
      if (v["seeds_needed"].is_number()) os << " (about " << v["seeds_needed"].get<long long>() << " seeds would decide)";
      os << ": " << v["says"].get<std::string>() << "\n";
    }
  }
  out << (style.narrow ? wrap_lines(os.str(), kNarrowColumns) : os.str());
}

}  // namespace gradflow
