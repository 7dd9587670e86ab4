// plan_dir.cpp — see plan_dir.hpp.
#include "gradflow/experiments/plan_dir.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gradflow/core/error.hpp"
#include "gradflow/experiments/runner.hpp"
#include "gradflow/experiments/spec.hpp"
#include "gradflow/experiments/slurm_script.hpp"

#ifndef GRADFLOW_GIT_COMMIT
#define GRADFLOW_GIT_COMMIT ""
#endif

namespace gradflow {
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

std::string plan_manifest_path(const std::string& dir) { return (fs::path(dir) / "plan.json").string(); }
std::string plan_results_dir(const std::string& dir) { return (fs::path(dir) / "results").string(); }

namespace {
fs::path canonical_of(const fs::path& p) {
  std::error_code ec;
  const fs::path c = fs::weakly_canonical(fs::absolute(p, ec), ec);
  return ec ? fs::absolute(p).lexically_normal() : c;
}
bool within(const fs::path& p, const fs::path& folder) {
  const auto mismatch = std::mismatch(folder.begin(), folder.end(), p.begin(), p.end());
  return mismatch.first == folder.end();
}
}  // namespace

void check_outputs_outside_plan(const std::string& dir,
                                const std::vector<std::pair<std::string, std::string>>& outputs) {
  const fs::path root = canonical_of(dir);
  for (const auto& [option, path] : outputs) {
    if (path.empty() || path == "-") continue;
    const fs::path out = canonical_of(path);
    std::string hit;
    for (const char* name : {"plan.json", "spec.json"}) {
      std::error_code ec;
      const fs::path own = root / name;
      if (out == own || (fs::exists(own, ec) && fs::exists(out, ec) && fs::equivalent(own, out, ec)))
        hit = (fs::path(dir) / name).string();
    }
    for (const char* folder : {"results", "failed", "slurm"})
      if (within(out, root / folder)) hit = (fs::path(dir) / folder).string() + "/";
    require(hit.empty(), option + " '" + path + "' is the plan's own " + hit + " (it would be overwritten); fix: write "
                             "the report outside the plan's plan.json, spec.json, results/, failed/ and slurm/ (e.g. " +
                             (fs::path(dir) / "report.json").string() + ")");
  }
}
std::vector<NamedPath> plan_input_paths(const Json& manifest) {
  std::vector<NamedPath> out;
  if (!manifest.contains("spec") || !manifest["spec"].is_object()) return out;
  const Json options = manifest["spec"].value("options", Json::object());
  for (const char* key : {"weights", "input", "cotangent", "token-ids"})
    if (options.is_object() && options.contains(key) && options[key].is_string())
      out.push_back({std::string("the plan's --") + key, options[key].get<std::string>()});
  return out;
}

std::string plan_failure_path(const std::string& dir, const std::string& name) {
  return (fs::path(dir) / "failed" / (name + ".txt")).string();
}

Json plan_manifest_head() {
  const std::string commit = GRADFLOW_GIT_COMMIT;  // CMake's `git rev-parse HEAD` at configure time, if any
  return Json{{"gradflow_plan", kPlanVersion},
              {"gradflow_version", GRADFLOW_VERSION},
              {"git_commit", commit.empty() ? Json() : Json(commit)}};
}

Json read_plan_manifest(const std::string& dir) {
  const std::string path = plan_manifest_path(dir);
  std::ifstream in(path);
  require(in.good(), "'" + dir + "' is not a gradflow plan (no " + path + "); fix: write one with --plan " + dir +
                         " on compare, sweep, train-sweep, run or analyze --mode streamed");
  std::stringstream ss;
  ss << in.rdbuf();
  Json m;
  try {
    m = Json::parse(ss.str());
  } catch (const std::exception&) {
    throw Error("'" + path + "' is not valid JSON; fix: write the plan again with --plan into a new directory");
  }
  require(m.is_object() && m.contains("gradflow_plan") && m["gradflow_plan"] == kPlanVersion && m.contains("tasks") &&
              m["tasks"].is_array() && m.contains("spec") && m["spec"].is_object(),
          "'" + path + "' is not a gradflow plan (version " + std::to_string(kPlanVersion) +
              "); fix: write the plan again with --plan into a new directory");
  for (size_t i = 0; i < m["tasks"].size(); ++i) {
    const Json& t = m["tasks"][i];
    require(t.is_object() && t.contains("id") && t["id"] == static_cast<int>(i) && t.contains("name") &&
                t["name"].is_string() && t.contains("configuration"),
            "'" + path + "': task " + std::to_string(i) + " is malformed; fix: write the plan again with --plan");
  }
  check_spec(m["spec"], "plan '" + path + "'", true);  // its "command", "options", ... of the types a spec has
  // an analyze plan's manifest repeats the command beside its spec: edited apart, the plan is not the one written
  require(!m.contains("command") || (m["command"].is_string() && m["command"] == m["spec"]["command"]),
          "'" + path + "': its \"command\" " + m.value("command", Json()).dump().substr(0, 40) + " is not its spec's " +
              m["spec"]["command"].dump().substr(0, 40) + " (the plan was edited); fix: write the plan again with --plan");
  return m;
}

std::vector<int> plan_missing_tasks(const std::string& dir, const Json& manifest) {
  std::vector<int> out;
  for (const Json& t : manifest["tasks"]) {
    const std::string path = (fs::path(plan_results_dir(dir)) / (t["name"].get<std::string>() + ".json")).string();
    bool done = false;
    try {
      done = !load_result_file(path, t["configuration"]).is_null();
    } catch (const Error&) {
      done = false;  // not a result of this task: it must run again
    }
    if (!done) out.push_back(t["id"].get<int>());
  }
  return out;
}

std::vector<int> parse_task_ids(const std::string& text, int n) {
  const auto number = [&](const std::string& s) {
    size_t used = 0;
    long v = -1;
    try {
      v = std::stol(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    require(used == s.size() && !s.empty() && s[0] != '-' && s[0] != '+',
            "task '" + s + "' in '" + text + "' is not a task ID; fix: e.g. 3, 0-7 or 1,4,9-11");
    require(v < n, "task " + s + " does not exist: the plan has " + std::to_string(n) + " tasks (IDs 0-" +
                       std::to_string(n - 1) + "); fix: give IDs below " + std::to_string(n));
    return static_cast<int>(v);
  };
  std::vector<bool> chosen(static_cast<size_t>(n), false);
  std::stringstream ss(text);
  std::string item;
  bool any = false;
  while (std::getline(ss, item, ',')) {
    const size_t dash = item.find('-', 1);
    const int a = number(dash == std::string::npos ? item : item.substr(0, dash));
    const int b = dash == std::string::npos ? a : number(item.substr(dash + 1));
    require(a <= b, "task range '" + item + "' is empty; fix: write it low-high, e.g. 0-7");
    for (int i = a; i <= b; ++i) chosen[static_cast<size_t>(i)] = true;
    any = true;
  }
  require(any && text.back() != ',', "no task ID in '" + text + "'; fix: e.g. 3, 0-7 or 1,4,9-11");
  std::vector<int> out;
  for (int i = 0; i < n; ++i)
    if (chosen[static_cast<size_t>(i)]) out.push_back(i);
  return out;
}

std::string task_command(const std::string& dir, int id) {
  return "gradflow task " + shell_word(dir) + " " + std::to_string(id);  // a hint to copy: the DIR quoted as needed
}

}  // namespace gradflow
