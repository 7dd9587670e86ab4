// experiment_options.cpp — see experiment_options.hpp.
#include "cli/experiment_options.hpp"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "gradflow/error.hpp"
#include "gradflow/experiments/experiment.hpp"
#include "gradflow/experiments/runner.hpp"
#include "gradflow/experiments/spec.hpp"
#include "gradflow/report/atomic_file.hpp"

namespace gradflow::cli {
using Json = nlohmann::ordered_json;

namespace {

std::string long_name(const CLI::Option* opt) {
  const auto& l = opt->get_lnames();
  return l.empty() ? std::string() : l.front();
}

// The long names (without dashes) of the model flags.
const std::set<std::string>& model_flag_names() {
  static const std::set<std::string> names = [] {
    CLI::App scratch;
    ModelOptions o;
    add_model_options(scratch, o);
    std::set<std::string> s;
    for (const CLI::Option* opt : scratch.get_options()) s.insert(long_name(opt));
    return s;
  }();
  return names;
}

// The options given explicitly on `sub`, as a spec's "options" object.
Json given_options(const CLI::App& sub) {
  Json j = Json::object();
  for (const CLI::Option* opt : sub.get_options()) {
    const std::string name = long_name(opt);
    if (opt->count() == 0 || name.empty() || name == "help" || name == "spec-file") continue;
    if (opt->get_expected_min() == 0) {
      j[name] = true;
      continue;
    }
    std::string v;
    for (const auto& r : opt->results()) v += (v.empty() ? "" : ",") + r;
    j[name] = v;
  }
  return j;
}

}  // namespace

void add_experiment_options(CLI::App& sub, ExperimentOptions& o) {
  add_model_options(sub, o.model);
  sub.add_option("--seeds", o.seeds, "repetitions per configuration; repetition r uses seed = --seed + r")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  sub.add_option("--json", o.json, "write the experiment report (mean/std over seeds, ratios, fits, spec) here");
  sub.add_option("--csv", o.csv, "write the long-format CSV (placement,depth,[param,value,]layer,metric,mean,std,n)");
  sub.add_option("--resume", o.resume,
                 "keep each finished configuration in DIR (written atomically); a rerun skips those already there");
  sub.add_option("--threads", o.threads, "configurations run at once (default: all cores; results do not depend on it)")
      ->check(CLI::NonNegativeNumber);
  sub.add_flag("--gradients-only", o.gradients_only, "skip the explicit Jacobians (gradient norms only, ~100x faster)");
  sub.add_flag("-q,--quiet", o.quiet, "no table, no progress");
  sub.add_option("--spec-file", o.spec_file, "(set by `gradflow run`) the spec file this run comes from")
      ->group("");
}

RunConfig resolve_point(const CLI::App& sub, const std::vector<std::string>& skip,
                        const std::vector<std::string>& overrides, const ExperimentOptions& o) {
  std::vector<std::string> words;
  for (const CLI::Option* opt : sub.get_options()) {
    const std::string name = long_name(opt);
    if (opt->count() == 0 || !model_flag_names().count(name)) continue;
    if (std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
    words.push_back("--" + name);
    if (opt->get_expected_min() == 0) continue;
    for (const auto& r : opt->results()) words.push_back(r);
  }
  words.insert(words.end(), overrides.begin(), overrides.end());
  CLI::App app;
  ModelOptions mo;
  add_model_options(app, mo);
  std::vector<std::string> reversed(words.rbegin(), words.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    std::string given;
    for (const auto& w : overrides) given += " " + w;
    throw Error("the point" + given + " is not a valid model: " + e.what() + "; fix: change --values or the model flags");
  }
  RunConfig rc = resolve(mo);
  rc.analysis.jacobians = !o.gradients_only;
  rc.analysis.progress = false;
  return rc;
}

void run_experiment(const CLI::App& sub, const std::string& kind, const PlanAxes& axes, const MakePoint& make,
                    const ExperimentOptions& o) {
  const std::vector<Configuration> configs = plan_configurations(axes, make);
  for (const auto& c : configs) check_memory(c.rc);
  if (!o.json.empty()) check_writable(o.json, "--json");
  if (!o.csv.empty()) check_writable(o.csv, "--csv");
  ExperimentInfo info;
  info.kind = kind;
  info.axes = axes;
  info.spec = Json{{"gradflow_spec", kSpecVersion}, {"command", kind}, {"options", given_options(sub)}};
  RunnerOptions ro;
  ro.threads = o.threads;
  ro.resume_dir = o.resume;
  ro.progress = !o.quiet;
  if (!o.quiet)
    std::cerr << "gradflow " << kind << ": " << configs.size() << " configurations (" << axes.seeds
              << " seeds each)\n";
  const auto reports = run_configurations(configs, ro);
  Json report = experiment_report(info, configs, reports);
  if (!o.spec_file.empty()) {  // the file as it was, beside the options it expanded to
    std::ifstream in(o.spec_file);
    std::stringstream ss;
    ss << in.rdbuf();
    report["spec_file"] = Json{{"path", o.spec_file}, {"content", Json::parse(ss.str(), nullptr, false)}};
  }
  write_report(report, kExperimentWriters, {o.json, o.csv, !o.quiet}, std::cout);
}

}  // namespace gradflow::cli
