// experiment.cpp — see experiment.hpp: the report (its CSV is experiment_csv.cpp, its table experiment_table.cpp).
// Everything is assembled in plan order (groups placement-major, seeds in order), so the report is the same whatever
// order the configurations finished in.
#include "gradflow/experiments/experiment.hpp"

#include <cmath>
#include <limits>
#include <map>

#include "gradflow/experiments/aggregate.hpp"
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

Json ratios(const std::vector<Group>& groups) {
  Json out = Json::array();
  for (size_t a = 0; a < groups.size(); ++a)
    for (size_t b = 0; b < groups.size(); ++b) {
      const Configuration &ca = *groups[a].first, &cb = *groups[b].first;
      if (ca.placement == cb.placement || ca.depth != cb.depth || ca.value != cb.value) continue;
      if (a > b) continue;  // each unordered pair once, numerator = earlier placement in the plan
      Json r;
      r[kNumerator] = ca.placement;
      r[kDenominator] = cb.placement;
      r[kLayers] = ca.depth;
      if (!ca.value.empty()) r[kValue] = ca.value;
      Json metrics = Json::object();
      for (const auto& name : scalar_names(groups[a])) {
        std::vector<double> per_seed, na, nb;
        for (size_t s = 0; s < groups[a].scalars.size(); ++s) {
          const auto* sb = scalars_of(groups[b], groups[a].reps[s]);
          if (!sb) continue;
          const double x = get(groups[a].scalars[s], name), y = get(*sb, name);
          if (std::isnan(y)) continue;
          per_seed.push_back(x / y);
          na.push_back(x);
          nb.push_back(y);
        }
        if (per_seed.empty()) continue;
        Json m = stat_json(mean_std(per_seed));
        m[kRatioOfMeans] = mean_std(na).mean / mean_std(nb).mean;
        metrics[name] = std::move(m);
      }
      r[kMetrics] = std::move(metrics);
      out.push_back(std::move(r));
    }
  return out;
}

// Power-law fits along the axis: groups of one placement (same value in a compare; same depth axis in a sweep).
Json fits(const std::vector<Group>& groups, const std::string& kind, const std::string& param) {
  Json out = Json::array();
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Group*>> series;
  for (const auto& g : groups) {
    const std::string key = g.first->placement;
    if (!series.count(key)) order.push_back(key);
    series[key].push_back(&g);
  }
  for (const auto& key : order) {
    const auto& gs = series[key];
    std::vector<double> x;
    for (const Group* g : gs) x.push_back(kind == "compare" ? static_cast<double>(g->first->depth) : g->first->x);
    bool numeric = gs.size() >= 2;
    for (double v : x) numeric = numeric && std::isfinite(v) && v > 0;
    if (!numeric) continue;
    Json f;
    f[kPlacement] = key;
    f[kX] = kind == "compare" ? kLayers : param;
    f[kXValues] = x;
    Json metrics = Json::object();
    for (const auto& name : scalar_names(*gs.front())) {
      std::vector<double> means;
      for (const Group* g : gs) {
        std::vector<double> v;
        for (const auto& s : g->scalars) v.push_back(get(s, name));
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
      Json m = stat_json(mean_std(per_seed));
      m[kExponentOfMeans] = k_means;
      metrics[name] = std::move(m);
    }
    f[kExponent] = std::move(metrics);
    out.push_back(std::move(f));
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
  out[kPlacements] = info.axes.placements;
  if (info.kind == "compare") out[kLayers] = info.axes.depths;
  if (!info.axes.param.empty()) {
    out[kParam] = info.axes.param;
    out[kValues] = info.axes.values;
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
  out[kFits] = fits(groups, info.kind, info.axes.param);
  return out;
}

}  // namespace gradflow
