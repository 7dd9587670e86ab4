// test_spec_run.cpp — a spec as a library call (commands/experiment_command.hpp): its options parsed as the
// command's own flags (errors name the spec), and a plan written, run in tasks (one failing on purpose through
// PlanStep::inject_fault, the tests' only fault) and merged through run_spec / run_plan_step, equal to the run.
#include <catch2/catch.hpp>

#include "gradflow/commands/experiment_command.hpp"
#include "gradflow/experiments/spec.hpp"
#include "io/temp_dir.hpp"

using namespace gradflow;
using Json = nlohmann::ordered_json;

namespace {
Json tiny_compare() {
  return Json{{"gradflow_spec", 1},
              {"command", "compare"},
              {"options", {{"placements", "post,pre"}, {"layers", 2}, {"seeds", 2}, {"d-model", 8}, {"heads", 2},
                           {"seq-len", 4}, {"gradients-only", true}}}};
}
SpecRun quiet() {
  SpecRun how;
  how.quiet = true;
  return how;
}
}  // namespace

TEST_CASE("run_spec: an unknown option is refused naming the spec, the option and the fix") {
  Json spec = tiny_compare();
  spec["options"]["bogus-flag"] = 1;
  REQUIRE_THROWS_WITH(run_spec(spec, "spec 'x.json'", quiet()),
                      Catch::StartsWith("spec 'x.json': ") && Catch::Contains("bogus-flag") &&
                          Catch::Contains("fix: correct its \"options\" (flags of `gradflow compare --help`"));
}

TEST_CASE("run_plan_step: plan, tasks (one failing on purpose), merge: the report of the direct run") {
  test::TempDir dir;
  const std::string d = dir.path() + "/plan";
  const SpecOutcome direct = run_spec(tiny_compare(), "t", quiet());
  REQUIRE(!direct.report.is_null());
  // the spec recorded: the options given, as the command line spells them (in the table's order)
  const Json& recorded = direct.report["spec"]["options"];
  const Json given = tiny_compare()["options"];  // a named copy: items() of a temporary would dangle in the loop
  REQUIRE(recorded.size() == given.size());
  for (const auto& [k, v] : given.items())
    REQUIRE(recorded.at(k) == (v.is_boolean() ? v : Json(spec_value_text(v))));

  SpecRun write = quiet();
  write.plan.kind = PlanStep::Kind::Write;
  write.plan.dir = d;
  REQUIRE(run_spec(tiny_compare(), "t", write).report.is_null());

  SpecRun task = quiet();
  task.plan.kind = PlanStep::Kind::Task;
  task.plan.dir = d;
  task.plan.task_ids = "0-3";
  task.plan.inject_fault = {2};
  REQUIRE_THROWS_WITH(run_plan_step(task), Catch::Contains("injected fault"));
  REQUIRE(plan_missing_tasks(d, read_plan_manifest(d)) == std::vector<int>{2});
  task.plan.inject_fault.clear();
  REQUIRE(run_plan_step(task).report.is_null());

  SpecRun merge = quiet();
  merge.plan.kind = PlanStep::Kind::Merge;
  merge.plan.dir = d;
  std::string note;  // what Ctrl-C during the merge would say: nothing was written, run the merge again
  merge.interrupt_note = [&note](const std::string& text) { note = text; };
  const SpecOutcome merged = run_plan_step(merge);
  REQUIRE_THAT(note, Catch::Contains("run the same gradflow merge again") && !Catch::Contains("--resume"));
  REQUIRE(merged.report["blas_kernel"].is_string());  // every task ran here, on one kernel set
  REQUIRE(merged.report["spec"] == direct.report["spec"]);
  REQUIRE(merged.writers.csv(merged.report) == direct.writers.csv(direct.report));
}
