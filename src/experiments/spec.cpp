// spec.cpp — see spec.hpp.
#include "gradflow/experiments/spec.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "gradflow/core/error.hpp"
#include "gradflow/experiments/claim_verdicts.hpp"

namespace gradflow {
using Json = nlohmann::ordered_json;

std::string spec_value_text(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number_float()) return v.dump();  // shortest text that reads back the same double
  if (v.is_array()) {
    std::string out;
    for (const auto& item : v) out += (out.empty() ? "" : ",") + spec_value_text(item);
    return out;
  }
  throw Error("spec option value " + v.dump() + " is not a string, number or list; fix: write it as on the "
              "command line, e.g. \"layers\": \"6,12,24\"");
}

void check_spec(const Json& spec, const std::string& where, bool plan) {
  require(spec.is_object(), where + ": a spec is a JSON object; fix: see examples/claims/*.json");
  require(spec.contains("gradflow_spec") && spec["gradflow_spec"] == kSpecVersion,
          where + ": \"gradflow_spec\" must be " + std::to_string(kSpecVersion) + "; fix: add \"gradflow_spec\": 1");
  require(spec.contains("command") && spec["command"].is_string() &&
              (spec["command"] == "compare" || spec["command"] == "sweep" || spec["command"] == "train-sweep" ||
               (plan && spec["command"] == "analyze")),
          where + ": \"command\" must be \"compare\", \"sweep\" or \"train-sweep\"; fix: e.g. \"command\": \"compare\"");
  for (const char* key : {"options", "reduced"}) {
    if (!spec.contains(key)) continue;
    require(spec[key].is_object(), where + ": \"" + key + "\" must be an object of flags; fix: e.g. {\"layers\": \"6,12\"}");
    for (const auto& [k, v] : spec[key].items()) {
      require(!k.empty() && k[0] != '-', where + ": option \"" + k + "\" in \"" + key +
                                             "\" has dashes; fix: write flags without them, e.g. \"d-model\"");
      require(!v.is_null() && !v.is_object(), where + ": option \"" + k + "\" must be a string, number, list or "
                                                       "boolean; fix: write it as on the command line");
    }
  }
  for (const auto& [k, v] : spec.items())
    require(k == "gradflow_spec" || k == "command" || k == "options" || k == "reduced" || k == "claim" ||
                k == "description" || k == "notes" || k == "plot" || k == "verdicts" || k == "reduced_verdicts",
            where + ": unknown key \"" + k + "\"; fix: use gradflow_spec, command, options, reduced, claim, "
                    "description, notes, plot, verdicts or reduced_verdicts");
  // the claim's statements decided at a level (claim_verdicts.hpp); reduced_verdicts: the same at the reduced sizes
  for (const char* key : {"verdicts", "reduced_verdicts"}) {
    if (!spec.contains(key)) continue;
    require(spec["command"] != "train-sweep", where + ": \"" + key + "\" are decided on compare and sweep reports; "
                                              "fix: drop them from a train-sweep spec");
    check_verdict_specs(spec[key], where);
  }
  if (spec.contains("plot")) {  // how `gradflow plot --kind claims` draws this spec's panel (docs/plotting.md)
    const Json& p = spec["plot"];
    require(p.is_object(), where + ": \"plot\" must be an object; fix: e.g. \"plot\": {\"metric\": "
                                   "\"bottom.grad_norm\", \"ratio\": true, \"article_value\": 0.01}");
    const auto strings = [](const Json& v) {
      return v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), [](const Json& e) { return e.is_string(); });
    };
    const char* const fix = "; fix: use \"metric\" (a string) or \"metrics\" (a list of strings) with \"labels\" (one each) "
                            "and \"ylabel\" (a string), \"x\" (\"depth\" or \"layer\"), \"ratio\" (true/false), "
                            "\"article_value\" (a number)";
    for (const auto& [k, v] : p.items()) {
      const bool known = k == "metric" || k == "metrics" || k == "labels" || k == "ylabel" || k == "x" || k == "ratio" ||
                         k == "article_value";
      const bool ok = ((k == "metric" || k == "ylabel") && v.is_string()) ||
                      ((k == "metrics" || k == "labels") && strings(v)) ||
                      (k == "x" && v.is_string() && (v == "depth" || v == "layer")) || (k == "ratio" && v.is_boolean()) ||
                      (k == "article_value" && v.is_number());
      require(ok, where + ": \"plot\": \"" + k + "\" " + (known ? "has the wrong type or value" : "is unknown") + fix);
    }
    require(!p.contains("labels") || (p.contains("metrics") && p["labels"].size() == p["metrics"].size()),
            where + ": \"plot\": \"labels\" names the \"metrics\", one each" + std::string(fix));
  }
}

Json load_spec(const std::string& path) {
  std::ifstream in(path);
  require(in.good(), "spec '" + path + "' cannot be read; fix: give an existing JSON file, e.g. examples/claims/c5.json");
  std::stringstream ss;
  ss << in.rdbuf();
  Json spec;
  try {
    spec = Json::parse(ss.str());
  } catch (const std::exception& e) {
    throw Error("spec '" + path + "' is not valid JSON (" + std::string(e.what()) + "); fix: correct the file");
  }
  // a compare/sweep report carries the spec that produced it: running the report reruns that spec
  if (spec.is_object() && spec.contains("groups") && spec.contains("spec")) spec = Json(spec["spec"]);
  check_spec(spec, "spec '" + path + "'");
  return spec;
}

std::vector<std::string> spec_to_args(const Json& spec, bool reduced) {
  Json options = spec.value("options", Json::object());
  if (reduced && spec.contains("reduced"))
    for (const auto& [k, v] : spec["reduced"].items()) options[k] = v;
  std::vector<std::string> args{spec["command"].get<std::string>()};
  for (const auto& [k, v] : options.items()) {
    if (v.is_boolean()) {
      if (v.get<bool>()) args.push_back("--" + k);
      continue;
    }
    args.push_back("--" + k);
    args.push_back(spec_value_text(v));
  }
  return args;
}

}  // namespace gradflow
