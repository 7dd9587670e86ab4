// spec_run.cpp — a spec, or a plan's, run by the experiment's own options (experiment_command.hpp): the spec's
// options become the command's flags (spec_to_args) and are parsed by the table the command line parses, so every
// flag, default, check and error message is the command's own.
#include <filesystem>

#include "gradflow/core/error.hpp"
#include "gradflow/report/decimal_options.hpp"
#include "gradflow/commands/analyze_plan.hpp"
#include "gradflow/commands/experiment_command.hpp"
#include "gradflow/experiments/plan_dir.hpp"
#include "gradflow/experiments/spec.hpp"
#include "gradflow/report/atomic_file.hpp"
#include "gradflow/report/json_text.hpp"

namespace gradflow {
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

SpecOutcome run_spec(const Json& spec, const std::string& where, const SpecRun& how) {
  const std::string command = spec["command"].get<std::string>();
  // an app of the three commands, as the command line has them: the spec's words (command first) select one
  CLI::App app;
  app.require_subcommand(1);
  ExperimentRun run;
  for (const char* name : {"compare", "sweep", "train-sweep"}) {
    CLI::App* sub = app.add_subcommand(name);
    ExperimentRun r = add_experiment_command(*sub, name);
    if (command == name) run = std::move(r);
  }
  require(static_cast<bool>(run), where + ": \"command\" must be \"compare\", \"sweep\" or \"train-sweep\"; fix: "
                                 "e.g. \"command\": \"compare\"");
  parse_spec_options(app, spec, where);
  SpecRun with = how;
  if (spec.contains("verdicts")) with.verdicts = spec["verdicts"];
  return run(with);
}

void parse_spec_options(CLI::App& app, const Json& spec, const std::string& where) {
  const std::vector<std::string> words = spec_to_args(spec, false);
  std::vector<std::string> reversed(words.rbegin(), words.rend());
  decimal_numbers_only(app);
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw Error(where + ": " + e.what() + "; fix: correct its \"options\" (flags of `gradflow " +
                spec["command"].get<std::string>() + " --help`, without dashes)");
  }
}

SpecOutcome run_plan_step(const SpecRun& how) {
  const std::string& dir = how.plan.dir;
  const Json manifest = read_plan_manifest(dir);
  if (how.plan.kind == PlanStep::Kind::Merge) check_outputs_outside_plan(dir, {{"--json", how.json}, {"--csv", how.csv}});
  if (manifest["spec"]["command"] == "analyze") return run_analyze_plan_step(manifest, how);  // a split streamed run
  SpecRun step = how;
  if (how.plan.kind == PlanStep::Kind::Merge && manifest.contains("spec_file")) {
    // the spec file's content, kept in the plan (the original path may not exist where the merge runs)
    const std::string copy = (fs::path(dir) / "spec.json").string();
    if (!fs::exists(copy)) write_file_atomic(copy, json_text(manifest["spec_file"]["content"], 1) + "\n");
    step.spec_file = copy;
  }
  return run_spec(manifest["spec"], "plan '" + dir + "'", step);
}

}  // namespace gradflow
