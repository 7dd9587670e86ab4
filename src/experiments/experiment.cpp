// experiment.cpp — see experiment.hpp. Everything is assembled in plan order (groups placement-major, seeds in
// order), so the report is the same whatever order the configurations finished in.
#include "gradflow/experiments/experiment.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "gradflow/experiments/aggregate.hpp"

namespace gradflow {
using Json = nlohmann::ordered_json;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Group {
  const Configuration* first = nullptr;
  std::vector<const Json*> reports;  // by repetition
  std::vector<std::map<std::string, double>> scalars;  // by repetition
};

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
  }
  return groups;
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
      r["numerator"] = ca.placement;
      r["denominator"] = cb.placement;
      r["layers"] = ca.depth;
      if (!ca.value.empty()) r["value"] = ca.value;
      Json metrics = Json::object();
      for (const auto& name : scalar_names(groups[a])) {
        std::vector<double> per_seed, na, nb;
        const size_t n = std::min(groups[a].scalars.size(), groups[b].scalars.size());
        for (size_t s = 0; s < n; ++s) {
          const double x = get(groups[a].scalars[s], name), y = get(groups[b].scalars[s], name);
          if (std::isnan(y)) continue;
          per_seed.push_back(x / y);
          na.push_back(x);
          nb.push_back(y);
        }
        if (per_seed.empty()) continue;
        Json m = stat_json(mean_std(per_seed));
        m["ratio_of_means"] = mean_std(na).mean / mean_std(nb).mean;
        metrics[name] = std::move(m);
      }
      r["metrics"] = std::move(metrics);
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
    f["placement"] = key;
    f["x"] = kind == "compare" ? "layers" : param;
    f["x_values"] = x;
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
      const size_t reps = gs.front()->scalars.size();
      for (size_t s = 0; s < reps; ++s) {
        std::vector<double> y;
        for (const Group* g : gs) y.push_back(s < g->scalars.size() ? get(g->scalars[s], name) : kNaN);
        const double k = power_law_exponent(x, y);
        if (!std::isnan(k)) per_seed.push_back(k);
      }
      Json m = stat_json(mean_std(per_seed));
      m["exponent_of_means"] = k_means;
      metrics[name] = std::move(m);
    }
    f["exponent"] = std::move(metrics);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

Json experiment_report(const ExperimentInfo& info, const std::vector<Configuration>& configs,
                       const std::vector<Json>& reports) {
  Json out;
  out["gradflow_version"] = GRADFLOW_VERSION;
  out["experiment"] = info.kind;
  out["spec"] = info.spec;
  out["seeds"] = Json{{"repetitions", info.axes.seeds},
                      {"base_seed", info.axes.base_seed},
                      {"rule", "repetition r (0-based) of every configuration runs with seed = base_seed + r"}};
  out["placements"] = info.axes.placements;
  if (info.kind == "compare") out["layers"] = info.axes.depths;
  if (!info.axes.param.empty()) {
    out["param"] = info.axes.param;
    out["values"] = info.axes.values;
  }
  const std::vector<Group> groups = make_groups(configs, reports);
  Json gj = Json::array();
  for (const auto& g : groups) {
    Json j;
    j["placement"] = g.first->placement;
    j["layers"] = g.first->depth;
    if (!info.axes.param.empty()) {
      j["param"] = info.axes.param;
      j["value"] = g.first->value;
      j["x"] = std::isfinite(g.first->x) ? Json(g.first->x) : Json();
    }
    Json cfg = (*g.reports.front())["config"];
    cfg.erase("seed");
    j["config"] = cfg;
    std::vector<uint64_t> seeds;
    for (const Json* r : g.reports) seeds.push_back((*r)["config"].value("seed", uint64_t{0}));
    j["seeds"] = seeds;
    const Json agg = aggregate_seeds(g.reports);
    j["scalars"] = agg["scalars"];
    j["per_layer"] = agg["layers"];
    gj.push_back(std::move(j));
  }
  out["groups"] = std::move(gj);
  out["ratios"] = ratios(groups);
  out["fits"] = fits(groups, info.kind, info.axes.param);
  return out;
}

// ---- CSV -------------------------------------------------------------------------------------------------

namespace {

std::string num(const Json& v) {
  if (!v.is_number()) return "nan";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v.get<double>());
  return buf;
}

// Quotes a field when it holds a comma or a quote (RFC 4180).
std::string field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

std::string experiment_csv(const Json& report) {
  const bool sweep = report.contains("param");
  std::string out = sweep ? "placement,depth,param,value,layer,metric,mean,std,n\n"
                          : "placement,depth,layer,metric,mean,std,n\n";
  auto row = [&](const std::string& placement, const Json& depth, const Json& value, const std::string& layer,
                 const std::string& metric, const Json& s) {
    out += field(placement) + "," + std::to_string(depth.get<long long>()) + ",";
    if (sweep) out += field(report["param"].get<std::string>()) + "," + field(value.get<std::string>()) + ",";
    out += layer + "," + field(metric) + "," + num(s["mean"]) + "," + num(s["std"]) + "," +
           std::to_string(s["n"].get<int>()) + "\n";
  };
  for (const auto& g : report["groups"]) {
    const Json value = g.value("value", std::string());
    for (const auto& layer : g["per_layer"]) {
      const std::string l = std::to_string(layer["index"].get<int>());
      for (const auto& [k, s] : layer.items())
        if (k != "index") row(g["placement"], g["layers"], value, l, k, s);
    }
    for (const auto& [k, s] : g["scalars"].items()) row(g["placement"], g["layers"], value, "", k, s);
  }
  for (const auto& r : report["ratios"]) {
    const std::string p = r["numerator"].get<std::string>() + "/" + r["denominator"].get<std::string>();
    const Json value = r.value("value", std::string());
    for (const auto& [k, s] : r["metrics"].items()) row(p, r["layers"], value, "", k, s);
  }
  return out;
}

// ---- table -----------------------------------------------------------------------------------------------

namespace {

struct Key {
  const char* metric;
  const char* label;
};
const Key kKeys[] = {
    {"bottom.grad_norm", "||dL/dx_0||"},
    {"top.grad_norm", "||dL/dx_top||"},
    {"summary.bottom_to_top_grad_ratio", "bottom/top"},
    {"summary.grad_growth_factor_per_layer", "factor/layer"},
    {"top.param_grad_norms.linear2.weight", "top ||dL/dW2||"},
    {"top.activation_rms", "rms(x_top)"},
    {"summary.bottom_product_rms_gain", "rms gain P_0"},
    {"summary.per_layer_rms_gain_product", "prod rms B_l"},
};

std::string pm(const Json& s) {
  if (!s.is_object() || !s["mean"].is_number()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3e±%.1e", s["mean"].get<double>(), s["std"].get<double>());
  return buf;
}

}  // namespace

void print_experiment_table(std::ostream& os, const Json& report) {
  const Json& cfg = report["groups"].front()["config"];
  os << "gradflow " << report["experiment"].get<std::string>() << ": d = " << cfg.value("d_model", 0)
     << ", h = " << cfg.value("heads", 0) << ", n = " << cfg.value("seq_len", 0) << ", init "
     << cfg.value("init", "?") << " x" << cfg.value("init_scale", "1") << ", " << cfg.value("mode", "?") << ", "
     << report["seeds"]["repetitions"].get<int>() << " seeds (seed = " << report["seeds"]["base_seed"].get<uint64_t>()
     << " + r); mean ± std over seeds\n";
  std::vector<Key> keys;
  for (const Key& k : kKeys)
    if (report["groups"].front()["scalars"].contains(k.metric)) keys.push_back(k);
  const bool sweep = report.contains("param");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%-10s %4s ", "placement", "L");
  os << buf;
  if (sweep) {
    std::snprintf(buf, sizeof buf, "%-14s ", report["param"].get<std::string>().c_str());
    os << buf;
  }
  for (const Key& k : keys) {
    std::snprintf(buf, sizeof buf, "%-17s ", k.label);
    os << buf;
  }
  os << "\n";
  for (const auto& g : report["groups"]) {
    std::snprintf(buf, sizeof buf, "%-10s %4d ", g["placement"].get<std::string>().c_str(), g["layers"].get<int>());
    os << buf;
    if (sweep) {
      std::snprintf(buf, sizeof buf, "%-14s ", g["value"].get<std::string>().c_str());
      os << buf;
    }
    for (const Key& k : keys) {
      std::snprintf(buf, sizeof buf, "%-17s ", pm(g["scalars"].contains(k.metric) ? g["scalars"][k.metric] : Json()).c_str());
      os << buf;
    }
    os << "\n";
  }
  if (!report["ratios"].empty()) {
    os << "ratios at equal depth" << (sweep ? " and value" : "") << " (mean ± std of the per-seed ratio):\n";
    for (const auto& r : report["ratios"]) {
      std::string name = r["numerator"].get<std::string>() + "/" + r["denominator"].get<std::string>();
      std::snprintf(buf, sizeof buf, "%-10s %4d ", name.c_str(), r["layers"].get<int>());
      os << buf;
      if (sweep) {
        std::snprintf(buf, sizeof buf, "%-14s ", r.value("value", std::string()).c_str());
        os << buf;
      }
      for (const Key& k : keys) {
        std::snprintf(buf, sizeof buf, "%-17s ", pm(r["metrics"].contains(k.metric) ? r["metrics"][k.metric] : Json()).c_str());
        os << buf;
      }
      os << "\n";
    }
  }
  if (!report["fits"].empty()) {
    os << "power-law exponent k of y ~ x^k (per-seed fit, mean ± std):\n";
    for (const auto& f : report["fits"]) {
      std::snprintf(buf, sizeof buf, "%-10s %4s ", f["placement"].get<std::string>().c_str(), "");
      os << buf << "x = " << f["x"].get<std::string>() << ":";
      for (const Key& k : keys)
        if (f["exponent"].contains(k.metric)) {
          const Json& e = f["exponent"][k.metric];
          std::snprintf(buf, sizeof buf, " %s %.3f±%.3f", k.label, e["mean"].get<double>(), e["std"].get<double>());
          os << buf << ";";
        }
      os << "\n";
    }
  }
}

}  // namespace gradflow
