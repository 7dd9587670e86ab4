// experiment.cpp — see experiment.hpp: the report (its CSV is experiment_csv.cpp, its table experiment_table.cpp).
// Everything is assembled in plan order (groups placement-major, seeds in order), so the report is the same whatever
// order the configurations finished in.
#include "gradflow/experiments/experiment.hpp"

#include <cmath>
#include <limits>
#include <map>

#include "gradflow/experiments/aggregate.hpp"
#include "gradflow/experiments/claim_verdicts.hpp"
#include "gradflow/experiments/statistics.hpp"
#include "gradflow/report/fields.hpp"

namespace gradflow {
using Json = nlohmann::ordered_json;
using namespace fields;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Group {
  const Configuration* first = nullptr;
  std::vector<const Json*> reports;  // by repetition
  std::vector<std::map<std::string, double>> scalars;  // by repetition
  std::vector<int> reps;  // the repetitions present (0..seeds-1, fewer in a partial merge)
};

// Repetition r's scalar metrics in `g`, null when it has none (seeds are paired by repetition, not by position).
const std::map<std::string, double>* scalars_of(const Group& g, int r) {
  for (size_t s = 0; s < g.reps.size(); ++s)
    if (g.reps[s] == r) return &g.scalars[s];
  return nullptr;
}

std::vector<Group> make_groups(const std::vector<Configuration>& configs, const std::vector<Json>& reports) {
  std::vector<Group> groups;
  for (size_t i = 0; i < configs.size(); ++i) {
    const size_t g = static_cast<size_t>(configs[i].group);
    if (groups.size() <= g) groups.resize(g + 1);
    if (!groups[g].first) groups[g].first = &configs[i];
    groups[g].reports.push_back(&reports[i]);
    std::map<std::string, double> m;
    for (const auto& [k, v] : scalar_metrics(reports[i])) m[k] = v;
    groups[g].scalars.push_back(std::move(m));
    groups[g].reps.push_back(configs[i].repetition);
  }
  std::vector<Group> present;  // a partial merge may lack whole groups
  for (auto& g : groups)
    if (g.first) present.push_back(std::move(g));
  return present;
}

// Metric names of a group's first seed, in report order.
std::vector<std::string> scalar_names(const Group& g) {
  std::vector<std::string> names;
  for (const auto& [k, v] : scalar_metrics(*g.reports.front())) names.push_back(k);
  return names;
}

double get(const std::map<std::string, double>& m, const std::string& k) {
  const auto it = m.find(k);
  return it == m.end() ? kNaN : it->second;
}

// Every scalar metric of groups a and b over the seeds (repetitions) both have: the summary of the per-seed ratio
// a/b, the ratio of the means, and the paired comparison (statistics.hpp) with its verdict.
Json pair_metrics(const Group& ga, const Group& gb) {
  Json metrics = Json::object();
  for (const auto& name : scalar_names(ga)) {
    std::vector<double> per_seed, na, nb;
    for (size_t s = 0; s < ga.scalars.size(); ++s) {
      const auto* sb = scalars_of(gb, ga.reps[s]);
      if (!sb) continue;
      const double x = get(ga.scalars[s], name), y = get(*sb, name);
      if (std::isnan(y)) continue;
      per_seed.push_back(x / y);
      na.push_back(x);
      nb.push_back(y);
    }
    if (per_seed.empty()) continue;
    Json m = summary_json(per_seed);
    m[kRatioOfMeans] = mean_std(na).mean / mean_std(nb).mean;
    const Paired p = compare_paired(na, nb);
    m[kPaired] = paired_json(p);
    m[kVerdict] = p.verdict;
    metrics[name] = std::move(m);
  }
  return metrics;
}

Json ratios(const std::vector<Group>& groups) {
  Json out = Json::array();
  for (size_t a = 0; a < groups.size(); ++a)
    for (size_t b = 0; b < groups.size(); ++b) {
      const Configuration &ca = *groups[a].first, &cb = *groups[b].first;
      if (ca.placement == cb.placement || ca.depth != cb.depth || ca.value != cb.value || ca.value2 != cb.value2)
        continue;
      if (a > b) continue;  // each unordered pair once, numerator = earlier placement in the plan
      Json r;
      r[kNumerator] = ca.placement;
      r[kDenominator] = cb.placement;
      r[kLayers] = ca.depth;
      if (!ca.value.empty()) r[kValue] = ca.value;
      if (!ca.value2.empty()) r[kValue2] = ca.value2;
      r[kMetrics] = pair_metrics(groups[a], groups[b]);
      out.push_back(std::move(r));
    }
  return out;
}

// Pairs of groups of one placement that differ in exactly one other axis (the depth of a compare, the swept value,
// the second swept value), the others held fixed ("at"): their seeds are shared as a placement pair's are.
Json comparisons(const std::vector<Group>& groups, const ExperimentInfo& info) {
  Json out = Json::array();
  for (size_t a = 0; a < groups.size(); ++a)
    for (size_t b = a + 1; b < groups.size(); ++b) {
      const Configuration &ca = *groups[a].first, &cb = *groups[b].first;
      if (ca.placement != cb.placement) continue;
      const bool depth = ca.depth != cb.depth, value = ca.value != cb.value, value2 = ca.value2 != cb.value2;
      if (depth + value + value2 != 1) continue;
      Json c;
      c[kPlacement] = ca.placement;
      Json at = Json::object();
      if (depth) {
        c[kAxis] = kLayers;
        c[kNumerator] = ca.depth;
        c[kDenominator] = cb.depth;
      } else {
        at[kLayers] = ca.depth;
      }
      if (value) {
        c[kAxis] = info.axes.param;
        c[kNumerator] = ca.value;
        c[kDenominator] = cb.value;
      } else if (!info.axes.param.empty()) {
        at[info.axes.param] = ca.value;
      }
      if (value2) {
        c[kAxis] = info.axes.param2;
        c[kNumerator] = ca.value2;
        c[kDenominator] = cb.value2;
      } else if (!info.axes.param2.empty()) {
        at[info.axes.param2] = ca.value2;
      }
      c[kAt] = std::move(at);
      c[kMetrics] = pair_metrics(groups[a], groups[b]);
      out.push_back(std::move(c));
    }
  return out;
}

// One line of groups along which an exponent is fitted: its x values and, in a 2-D sweep, the other swept option
// held fixed ({name: value}; null otherwise).
struct FitSeries {
  std::string placement, axis;
  Json at;
  std::vector<const Group*> groups;
  std::vector<double> x;
};

Json fit_json(const FitSeries& s) {
  const auto& gs = s.groups;
  const std::vector<double>& x = s.x;
  Json f;
  f[kPlacement] = s.placement;
  f[kX] = s.axis;
  if (!s.at.is_null()) f[kAt] = s.at;
  f[kXValues] = x;
  Json metrics = Json::object();
  for (const auto& name : scalar_names(*gs.front())) {
    std::vector<double> means;
    for (const Group* g : gs) {
      std::vector<double> v;
      for (const auto& sc : g->scalars) v.push_back(get(sc, name));
      means.push_back(mean_std(v).mean);
    }
    const double k_means = power_law_exponent(x, means);
    if (std::isnan(k_means)) continue;
    std::vector<double> per_seed;
    for (int r : gs.front()->reps) {
      std::vector<double> y;
      for (const Group* g : gs) {
        const auto* sg = scalars_of(*g, r);
        y.push_back(sg ? get(*sg, name) : kNaN);
      }
      const double k = power_law_exponent(x, y);
      if (!std::isnan(k)) per_seed.push_back(k);
    }
    Json m = summary_json(per_seed);
    m[kExponentOfMeans] = k_means;
    metrics[name] = std::move(m);
  }
  f[kExponent] = std::move(metrics);
  return f;
}

// Power-law fits along the axis: groups of one placement (x = depth in a compare, the swept value in a sweep).
// A 2-D sweep fits along each swept option with the other held fixed: first along --param for each value of
// --param2, then along --param2 for each value of --param (each entry's "at" names the fixed one).
Json fits(const std::vector<Group>& groups, const ExperimentInfo& info) {
  const std::string& kind = info.kind;
  const PlanAxes& axes = info.axes;
  std::vector<FitSeries> lines;
  const auto add = [&](const std::string& key, const FitSeries& proto, const Group& g, double x) {
    for (auto& l : lines)
      if (l.placement + "\n" + l.at.dump() == key) {
        l.groups.push_back(&g);
        l.x.push_back(x);
        return;
      }
    lines.push_back(proto);
    lines.back().groups.push_back(&g);
    lines.back().x.push_back(x);
  };
  const bool two_d = !axes.param2.empty();
  for (const auto& g : groups) {  // along --param (the depth in a compare)
    FitSeries proto{g.first->placement, kind == "compare" ? std::string(kLayers) : axes.param, Json(), {}, {}};
    if (two_d) proto.at = Json{{axes.param2, g.first->value2}};
    add(proto.placement + "\n" + proto.at.dump(), proto, g,
        kind == "compare" ? static_cast<double>(g.first->depth) : g.first->x);
  }
  if (two_d) {
    for (const auto& g : groups) {  // along --param2
      FitSeries proto{g.first->placement, axes.param2, Json{{axes.param, g.first->value}}, {}, {}};
      add(proto.placement + "\n" + proto.at.dump(), proto, g, g.first->x2);
    }
  }
  Json out = Json::array();
  for (const auto& l : lines) {
    bool numeric = l.groups.size() >= 2;
    for (double v : l.x) numeric = numeric && std::isfinite(v) && v > 0;
    if (numeric) out.push_back(fit_json(l));
  }
  return out;
}

}  // namespace

Json experiment_report(const ExperimentInfo& info, const std::vector<Configuration>& configs,
                       const std::vector<Json>& reports) {
  Json out;
  out["gradflow_version"] = GRADFLOW_VERSION;
  out[kExperiment] = info.kind;
  out[kSpec] = info.spec;
  out[kSeeds] = Json{{kRepetitions, info.axes.seeds},
                     {kBaseSeed, info.axes.base_seed},
                     {"rule", "repetition r (0-based) of every configuration runs with seed = base_seed + r"}};
  out[kStatistics] = statistics_note();
  out[kPlacements] = info.axes.placements;
  if (info.kind == "compare") out[kLayers] = info.axes.depths;
  if (!info.axes.param.empty()) {
    out[kParam] = info.axes.param;
    out[kValues] = info.axes.values;
  }
  if (!info.axes.param2.empty()) {
    out[kParam2] = info.axes.param2;
    out[kValues2] = info.axes.values2;
  }
  const std::vector<Group> groups = make_groups(configs, reports);
  Json gj = Json::array();
  for (const auto& g : groups) {
    Json j;
    j[kPlacement] = g.first->placement;
    j[kLayers] = g.first->depth;
    if (!info.axes.param.empty()) {
      j[kParam] = info.axes.param;
      j[kValue] = g.first->value;
      j[kX] = std::isfinite(g.first->x) ? Json(g.first->x) : Json();
    }
    if (!info.axes.param2.empty()) {
      j[kParam2] = info.axes.param2;
      j[kValue2] = g.first->value2;
      j[kX2] = std::isfinite(g.first->x2) ? Json(g.first->x2) : Json();
    }
    Json cfg = (*g.reports.front())[kConfig];
    cfg.erase(kSeed);
    j[kConfig] = cfg;
    std::vector<uint64_t> seeds;
    for (const Json* r : g.reports) seeds.push_back((*r)[kConfig].value(kSeed, uint64_t{0}));
    j[kSeeds] = seeds;
    const Json agg = aggregate_seeds(g.reports);
    j[kScalars] = agg[kScalars];
    j[kPerLayer] = agg[kLayers];
    gj.push_back(std::move(j));
  }
  out[kGroups] = std::move(gj);
  out[kRatios] = ratios(groups);
  out[kComparisons] = comparisons(groups, info);
  out[kFits] = fits(groups, info);
  if (info.spec.is_object() && info.spec.contains("verdicts")) out[kVerdicts] = decide_claims(info.spec, out);
  return out;
}

}  // namespace gradflow
