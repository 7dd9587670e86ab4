// plan_options.cpp — see plan_options.hpp.
#include "cli/plan_options.hpp"

#include <cstdlib>
#include <filesystem>

#include "cli/commands.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/experiments/plan.hpp"
#include "gradflow/experiments/spec.hpp"
#include "gradflow/report/atomic_file.hpp"

namespace gradflow::cli {
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

void add_plan_options(CLI::App& sub, PlanFlags& f) {
  sub.add_option("--plan", f.dir,
                 "write the plan (one task per configuration) into DIR instead of running it; then gradflow task, "
                 "slurm, merge (docs/cluster.md)")
      ->check(non_empty_path());
  sub.add_option("--plan-step", f.step, "(set by gradflow task/merge)")->check(CLI::IsMember({"task", "merge"}))->group("");
  sub.add_option("--plan-tasks", f.tasks, "(set by gradflow task)")->group("");
  sub.add_flag("--plan-allow-partial", f.allow_partial, "(set by gradflow merge)")->group("");
}

PlanStep plan_step(const PlanFlags& f, const Json& spec, const std::string& spec_file,
                   const std::vector<std::pair<std::string, bool>>& no_effect) {
  PlanStep step;
  if (f.dir.empty()) return step;
  step.dir = f.dir;
  if (f.step == "task") {
    step.kind = PlanStep::Kind::Task;
    step.task_ids = f.tasks;
    if (const char* fault = std::getenv("GRADFLOW_TASK_FAULT"); fault && *fault)
      for (const std::string& id : split_list(fault, "GRADFLOW_TASK_FAULT")) {
        try {
          step.inject_fault.push_back(std::stoi(id));
        } catch (const std::exception&) {
          throw Error("GRADFLOW_TASK_FAULT '" + std::string(fault) + "' is not a list of task IDs; fix: unset it");
        }
      }
    return step;
  }
  if (f.step == "merge") {
    step.kind = PlanStep::Kind::Merge;
    step.allow_partial = f.allow_partial;
    return step;
  }
  for (const auto& [option, given] : no_effect)
    require(!given, option + " has no effect with --plan (nothing runs now); fix: give " +
                        (option == "--threads" ? std::string("it to gradflow task (default: SLURM_CPUS_PER_TASK)")
                         : option == "--resume" ? std::string("none: the plan's results are its resume files")
                                                : std::string("it to gradflow merge")));
  step.kind = PlanStep::Kind::Write;
  step.manifest = plan_manifest_head();
  step.manifest["command"] = spec["command"];
  step.manifest["spec"] = spec;
  if (!spec_file.empty())  // `gradflow run SPEC --plan DIR`: the merged report records the spec file as run's does
    step.manifest["spec_file"] = Json{{"path", spec_file}, {"content", load_spec(spec_file)}};
  return step;
}

void run_experiment_words(const std::vector<std::string>& words, const std::string& where, const std::string& command) {
  CLI::App app;
  setup_compare(app);
  setup_sweep(app);
  setup_train_sweep(app);
  app.require_subcommand(1);
  std::vector<std::string> reversed(words.rbegin(), words.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw Error(where + ": " + e.what() + "; fix: correct its \"options\" (flags of `gradflow " + command +
                " --help`, without dashes)");
  }
}

void run_plan_step(const std::string& dir, const std::string& step, const std::vector<std::string>& extra) {
  const Json manifest = read_plan_manifest(dir);
  std::vector<std::string> words = spec_to_args(manifest["spec"], false);
  if (step == "merge" && manifest.contains("spec_file")) {
    // the spec file's content, kept in the plan (the original path may not exist where the merge runs)
    const std::string copy = (fs::path(dir) / "spec.json").string();
    if (!fs::exists(copy)) write_file_atomic(copy, manifest["spec_file"]["content"].dump(1) + "\n");
    words.insert(words.end(), {"--spec-file", copy});
  }
  words.insert(words.end(), {"--plan", dir, "--plan-step", step});
  words.insert(words.end(), extra.begin(), extra.end());
  run_experiment_words(words, "plan '" + dir + "'", manifest["command"].get<std::string>());
}

}  // namespace gradflow::cli
