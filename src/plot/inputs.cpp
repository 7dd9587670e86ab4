// inputs.cpp — see inputs.hpp.
#include "gradflow/plot/inputs.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gradflow/core/error.hpp"
#include "gradflow/core/nearest_names.hpp"
#include "gradflow/model/placement.hpp"
#include "gradflow/report/flag_meaning.hpp"
#include "gradflow/report/fields.hpp"

namespace gradflow {
using namespace fields;
namespace {

std::string short_value(const PlotJson& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  std::ostringstream s;
  s << v.get<double>();
  return s.str();
}

// A swept option and its value as a legend names them: "init-scale=0.5", a flag by what it means (flag_meaning).
std::string swept_label(const std::string& param, const PlotJson& v) {
  const std::string value = short_value(v), meaning = flag_meaning(param, value);
  return meaning.empty() ? param + "=" + value : meaning;
}

// Config fields worth a legend entry when they differ, with their short names.
const std::pair<const char*, const char*> kLabelled[] = {
    {kLayers, "L="},    {kDModel, "d="},         {kHeads, "h="},       {kDFf, "d_ff="}, {kSeqLen, "n="},
    {kNorm, ""},        {kActivation, ""},       {kInit, "init="},     {kInitScale, "init scale "},
    {kResidualScale, "λ="}, {kCausal, "causal="}, {kMode, ""},         {kSeed, "seed="},
};

}  // namespace

namespace {
// The fields plot reads from a report, of the types gradflow writes them: Error (exit 2) naming the input, the
// field and the type otherwise (an edited or foreign report), instead of failing inside a figure.
void check_field(const PlotJson& j, const std::string& key, const char* type, const std::string& where) {
  if (!j.contains(key)) return;
  const PlotJson& v = j[key];
  const std::string t = type;
  const bool ok = t == "a string" ? v.is_string() : t == "an integer" ? v.is_number_integer()
                  : t == "a number" ? v.is_number() : t == "true or false" ? v.is_boolean()
                  : t == "an object" ? v.is_object() : t == "a list" ? v.is_array() : false;
  require(ok, where + ": \"" + key + "\" must be " + t + " (it is " + v.dump().substr(0, 40) +
                  "); fix: pass a report written by gradflow (--json), unedited");
}

void check_config(const PlotJson& cfg, const std::string& where) {
  require(cfg.is_object(), where + " must be an object; fix: pass a report written by gradflow (--json), unedited");
  for (const char* k : {"placement", "norm", "activation", "init"}) check_field(cfg, k, "a string", where);
  for (const char* k : {"layers", "d_model", "heads", "d_ff", "seq_len", "seed"}) check_field(cfg, k, "an integer", where);
  for (const char* k : {"causal", "final_norm"}) check_field(cfg, k, "true or false", where);
}

void check_analyze_report(const PlotJson& r, const std::string& p) {
  check_config(r[kConfig], "input '" + p + "': \"config\"");
  for (size_t l = 0; l < r[kLayers].size(); ++l) {
    const std::string at = "input '" + p + "': layers[" + std::to_string(l) + "]";
    const PlotJson& layer = r[kLayers][l];
    require(layer.is_object(), at + " must be an object; fix: pass a report written by gradflow (--json), unedited");
    check_field(layer, kAttention, "an object", at);
    if (!layer.contains(kAttention)) continue;
    check_field(layer[kAttention], kHeads, "a list", at + ".attention");
    if (!layer[kAttention].contains(kHeads)) continue;
    for (const PlotJson& h : layer[kAttention][kHeads])
      require(h.is_object(), at + ".attention.heads: every entry must be an object; fix: pass a report written by "
                                  "gradflow (--json), unedited");
  }
}
}  // namespace

std::vector<PlotInput> load_inputs(const std::vector<std::string>& paths) {
  std::vector<PlotInput> out;
  for (const auto& p : paths) {
    PlotInput in;
    in.path = p;
    in.stem = std::filesystem::path(p).stem().string();
    std::ifstream f(p, std::ios::binary);
    require(f.good(), "cannot open input '" + p + "'; fix: pass an existing report (.json) or Jacobian (.npy)");
    const std::string ext = std::filesystem::path(p).extension().string();
    if (ext == ".npy" || ext == ".NPY") {
      in.kind = InputKind::Npy;
      out.push_back(std::move(in));
      continue;
    }
    try {
      in.json = PlotJson::parse(f);
    } catch (const std::exception&) {
      throw Error("input '" + p + "' is not valid JSON; fix: pass a report written by gradflow analyze/compare/sweep --json");
    }
    if (in.json.is_object() && in.json.contains(kGroups) && in.json.contains(kExperiment)) {
      in.kind = InputKind::Experiment;
      require(in.json[kGroups].is_array(), "input '" + p + "': \"groups\" must be a list; fix: pass a report written "
                                                           "by gradflow (--json), unedited");
      for (size_t g = 0; g < in.json[kGroups].size(); ++g) {
        const std::string at = "input '" + p + "': groups[" + std::to_string(g) + "]";
        require(in.json[kGroups][g].is_object(), at + " must be an object; fix: pass a report written by gradflow "
                                                      "(--json), unedited");
        if (in.json[kGroups][g].contains(kConfig)) check_config(in.json[kGroups][g][kConfig], at + ".config");
        check_field(in.json[kGroups][g], kPlacement, "a string", at);
        check_field(in.json[kGroups][g], kLayers, "an integer", at);
      }
    } else if (in.json.is_object() && ((in.json.contains(kLog) && in.json.contains(kTask)) ||
                                       (in.json.contains(kRuns) && in.json.contains(kGrid)))) {
      in.kind = InputKind::Train;
    } else if (in.json.is_object() && in.json.contains("axes") && in.json["axes"].is_array() &&
               in.json.contains(kConfig) && in.json[kConfig].is_object() && in.json[kConfig].contains("coord_check")) {
      in.kind = InputKind::CoordCheck;
    } else if (in.json.is_object() && in.json.contains(kCheckpoints) && in.json.contains(kOverTraining)) {
      in.kind = InputKind::OverTraining;
    } else if (in.json.is_object() && in.json.contains(kLayers) && in.json[kLayers].is_array() &&
               in.json.contains(kConfig)) {
      in.kind = InputKind::Analyze;
      require(!in.json[kLayers].empty(), "input '" + p + "' has no layers; fix: rerun gradflow analyze");
      check_analyze_report(in.json, p);
    } else {
      throw Error("input '" + p +
                  "' is neither an analyze report (layers, config) nor a compare/sweep report (experiment, groups); "
                  "fix: pass the --json output of gradflow analyze, compare or sweep");
    }
    out.push_back(std::move(in));
  }
  return out;
}

std::string placement_label(const std::string& placement) { return placement_display_name(placement); }

std::vector<std::vector<std::string>> report_factors(const std::vector<const PlotInput*>& reports) {
  std::vector<std::vector<std::string>> f;
  for (const PlotInput* r : reports)
    f.push_back({r->json[kConfig].contains(kPlacement) ? placement_label(r->json[kConfig].value(kPlacement, r->stem)) : r->stem});
  if (reports.size() < 2) return f;
  for (const auto& [key, prefix] : kLabelled) {
    bool differs = false;
    for (const PlotInput* r : reports) differs |= r->json[kConfig].value(key, PlotJson()) != reports[0]->json[kConfig].value(key, PlotJson());
    if (!differs) continue;
    for (size_t i = 0; i < reports.size(); ++i) {
      const PlotJson v = reports[i]->json[kConfig].value(key, PlotJson());
      f[i].push_back(v.is_null() ? std::string("-") : std::string(prefix) + short_value(v));
    }
  }
  return f;
}

std::vector<std::string> report_labels(const std::vector<const PlotInput*>& reports) {
  std::vector<std::string> labels;
  for (const auto& f : report_factors(reports)) {
    std::string s;
    for (const auto& v : f)
      if (v != "-") s += (s.empty() ? "" : ", ") + v;
    labels.push_back(s);
  }
  bool unique = true;
  for (size_t i = 0; i < labels.size(); ++i)
    for (size_t j = i + 1; j < labels.size(); ++j) unique &= labels[i] != labels[j];
  if (!unique)
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = reports[i]->stem;
  return labels;
}

std::vector<std::string> analyze_report_labels(const std::vector<PlotInput>& in) {
  std::vector<const PlotInput*> reports;
  for (const auto& i : in)
    if (i.kind == InputKind::Analyze) reports.push_back(&i);
  return report_labels(reports);
}

std::vector<std::string> train_report_labels(const std::vector<PlotInput>& in) {
  std::vector<const PlotInput*> reports;
  for (const auto& i : in)
    if (i.json.contains(kLog)) reports.push_back(&i);
  return report_labels(reports);
}

std::vector<std::vector<std::string>> group_factors(const PlotJson& e) {
  const auto& groups = e[kGroups];
  bool depths = false, values = false, values2 = false;
  for (const auto& g : groups) {
    depths |= g.value(kLayers, PlotJson()) != groups[0].value(kLayers, PlotJson());
    values |= g.value(kValue, PlotJson()) != groups[0].value(kValue, PlotJson());
    values2 |= g.value(kValue2, PlotJson()) != groups[0].value(kValue2, PlotJson());
  }
  std::vector<std::vector<std::string>> f;
  for (const auto& g : groups) {
    f.push_back({placement_label(g.value(kPlacement, std::string("?")))});
    if (depths) f.back().push_back("L=" + short_value(g.value(kLayers, PlotJson(0))));
    if (values) f.back().push_back(swept_label(g.value(kParam, std::string("value")), g.value(kValue, PlotJson(""))));
    if (values2) f.back().push_back(swept_label(g.value(kParam2, std::string("value2")), g.value(kValue2, PlotJson(""))));
  }
  return f;
}

std::vector<std::string> group_labels(const PlotJson& e) {
  std::vector<std::string> labels;
  for (const auto& f : group_factors(e)) {
    std::string s;
    for (const auto& v : f) s += (s.empty() ? "" : ", ") + v;
    labels.push_back(s);
  }
  return labels;
}

double json_number(const PlotJson& j, const std::string& key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return NAN;
  return j[key].get<double>();
}

double json_number(const PlotJson& j, const std::string& key, const std::string& sub) {
  if (!j.is_object() || !j.contains(key)) return NAN;
  return json_number(j[key], sub);
}

std::pair<double, double> json_stat(const PlotJson& j, const std::string& key) {
  if (!j.is_object() || !j.contains(key)) return {NAN, NAN};
  return {json_number(j[key], kMean), json_number(j[key], kStd)};
}

Spread json_spread(const PlotJson& j, const std::string& key) {
  if (!j.is_object() || !j.contains(key)) return {NAN, NAN, NAN};
  const PlotJson& s = j[key];
  const double mean = json_number(s, kMean), low = json_number(s, "ci_low"), high = json_number(s, "ci_high");
  double lo = mean, hi = mean;
  if (std::isfinite(low) && std::isfinite(high)) {
    lo = low, hi = high;
  } else if (!s.contains("ci_low")) {  // a report from before the intervals: mean ± std
    const double sd = json_number(s, kStd);
    if (std::isfinite(sd)) lo = mean - sd, hi = mean + sd;
  }
  if (mean > 0) lo = std::max(lo, 0.1 * mean);  // stays on a log axis
  return {mean, lo, hi};
}

std::vector<std::string> metric_names(const PlotInput& in) {
  std::vector<std::string> names;
  const auto add = [&names](const std::string& n) {
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  const PlotJson& r = in.json;
  if (!r.is_object() || !r.contains(kGroups) || !r[kGroups].is_array()) return names;
  const bool train_sweep = in.kind == InputKind::Train;
  if (train_sweep) add(kConvergedFraction);
  for (const auto& g : r[kGroups]) {
    if (!g.is_object()) continue;
    if (!train_sweep) {
      if (g.contains(kScalars) && g[kScalars].is_object())
        for (const auto& [k, v] : g[kScalars].items()) add(k);
      continue;
    }
    if (!g.contains(kCells) || !g[kCells].is_array()) continue;
    for (const auto& c : g[kCells])
      if (c.is_object())
        for (const auto& [k, v] : c.items())
          if (v.is_number()) add(k);
  }
  return names;
}

std::string unknown_metric(const std::string& metric, const PlotInput& in) {
  const std::vector<std::string> names = metric_names(in);
  std::string near;
  for (const auto& n : nearest_names(metric, names, 3)) near += (near.empty() ? "" : ", ") + n;
  return "metric '" + metric + "' is not in " + in.path + "; fix: pick --metric from its " +
         std::to_string(names.size()) + " metrics" + (near.empty() ? "" : " (nearest: " + near + ")") +
         "; `--metric list` prints them all";
}

}  // namespace gradflow
