// test_plan_dir.cpp — plans in the library (experiments/plan_dir.hpp, runner.hpp's plan steps, slurm_script.hpp):
// a plan written, its tasks run in pieces, merged: the reports equal the plain run's; a partial merge; task IDs;
// the Slurm array layout and scripts.
#include <catch2/catch.hpp>
#include <filesystem>

#include "gradflow/experiments/experiment.hpp"
#include "gradflow/experiments/runner.hpp"
#include "gradflow/experiments/slurm_script.hpp"
#include "experiments/runner_fixtures.hpp"
#include "io/temp_dir.hpp"

using namespace gradflow;
using Json = nlohmann::ordered_json;

using test::tiny_plan;
using test::without_timing;

namespace {

RunnerOptions step(PlanStep::Kind kind, const std::string& dir) {
  RunnerOptions o;
  o.progress = false;
  o.plan.kind = kind;
  o.plan.dir = dir;
  if (kind == PlanStep::Kind::Write) {  // a plan's spec is checked when it is read back: the smallest valid one
    o.plan.manifest = plan_manifest_head();
    o.plan.manifest["spec"] = Json{{"gradflow_spec", 1}, {"command", "compare"}};
  }
  return o;
}

}  // namespace

TEST_CASE("plan: written, run in pieces, merged: the reports equal a plain run's") {
  test::TempDir dir;
  const std::string d = dir.path() + "/plan";
  const auto plan = tiny_plan();
  RunnerOptions plain;
  plain.progress = false;
  plain.threads = 1;
  const auto direct = run_configurations(plan, plain);

  REQUIRE(run_configurations(plan, step(PlanStep::Kind::Write, d)).empty());
  const Json manifest = read_plan_manifest(d);
  REQUIRE(manifest["tasks"].size() == plan.size());
  for (size_t i = 0; i < plan.size(); ++i) {
    REQUIRE(manifest["tasks"][i]["id"] == i);
    REQUIRE(manifest["tasks"][i]["name"].get<std::string>() + ".json" == plan[i].file_name());  // --resume's identity
    REQUIRE(manifest["tasks"][i]["configuration"] == expected_config(plan[i].rc));
  }
  REQUIRE(manifest["gradflow_version"] == GRADFLOW_VERSION);
  REQUIRE(plan_missing_tasks(d, manifest).size() == plan.size());

  RunnerOptions merge = step(PlanStep::Kind::Merge, d);
  REQUIRE_THROWS_WITH(run_configurations(plan, merge), Catch::Contains("no task") && Catch::Contains("has a result"));

  RunnerOptions task = step(PlanStep::Kind::Task, d);
  task.plan.task_ids = "5-7";
  task.threads = 2;
  REQUIRE(run_configurations(plan, task).empty());
  REQUIRE(plan_missing_tasks(d, manifest) == std::vector<int>{0, 1, 2, 3, 4});
  REQUIRE_THROWS_WITH(run_configurations(plan, merge), Catch::Contains("5 of 8 tasks") && Catch::Contains("--allow-partial"));

  // partial: the rest merged, the missing listed
  merge.plan.allow_partial = true;
  RunnerStats stats;
  const auto partial = run_configurations(plan, merge, &stats);
  REQUIRE(stats.partial["merged"] == 3);
  REQUIRE(stats.partial["missing"].size() == 5);
  REQUIRE(stats.partial["missing"][0]["name"] == "post_L2_s0");
  REQUIRE(partial[0].is_null());
  REQUIRE(without_timing(partial[6]) == without_timing(direct[6]));

  task.plan.task_ids = "0-4";
  task.threads = 1;
  run_configurations(plan, task);
  REQUIRE(plan_missing_tasks(d, manifest).empty());
  merge.plan.allow_partial = false;
  RunnerStats full;
  const auto merged = run_configurations(plan, merge, &full);
  REQUIRE(full.partial.is_null());
  for (size_t i = 0; i < plan.size(); ++i) REQUIRE(without_timing(merged[i]) == without_timing(direct[i]));
  // the experiment report built from them equals the plain run's, number for number
  ExperimentInfo info;
  info.kind = "compare";
  info.axes.placements = {"post", "pre"};
  info.axes.depths = {2, 3};
  info.axes.seeds = 2;
  REQUIRE(experiment_report(info, plan, merged).dump() == experiment_report(info, plan, direct).dump());
}

TEST_CASE("plan: a task fails on purpose (injected fault): no result, a failure note, the rest unaffected") {
  test::TempDir dir;
  const std::string d = dir.path() + "/plan";
  const auto plan = tiny_plan();
  run_configurations(plan, step(PlanStep::Kind::Write, d));
  RunnerOptions task = step(PlanStep::Kind::Task, d);
  task.plan.task_ids = "0-2";
  task.plan.inject_fault = {1};
  REQUIRE_THROWS_WITH(run_configurations(plan, task), Catch::Contains("injected fault"));
  REQUIRE(plan_missing_tasks(d, read_plan_manifest(d)) == std::vector<int>{1, 3, 4, 5, 6, 7});
  REQUIRE(std::filesystem::exists(plan_failure_path(d, "post_L2_s1")));
  task.plan.inject_fault.clear();
  run_configurations(plan, task);
  REQUIRE(!std::filesystem::exists(plan_failure_path(d, "post_L2_s1")));
}

TEST_CASE("plan: another experiment in the same directory is refused, the same one is accepted") {
  test::TempDir dir;
  const std::string d = dir.path() + "/plan";
  auto plan = tiny_plan();
  run_configurations(plan, step(PlanStep::Kind::Write, d));
  REQUIRE_NOTHROW(run_configurations(plan, step(PlanStep::Kind::Write, d)));
  for (auto& c : plan) c.rc.model.residual_scale = 0.5;
  REQUIRE_THROWS_WITH(run_configurations(plan, step(PlanStep::Kind::Write, d)), Catch::Contains("another plan"));
  RunnerOptions task = step(PlanStep::Kind::Task, d);
  task.plan.task_ids = "0";
  REQUIRE_THROWS_WITH(run_configurations(plan, task), Catch::Contains("differ"));
}

TEST_CASE("plan: task IDs") {
  REQUIRE(parse_task_ids("3", 8) == std::vector<int>{3});
  REQUIRE(parse_task_ids("5-7,0,6", 8) == std::vector<int>{0, 5, 6, 7});
  for (const char* bad : {"8", "x", "-1", "3-1", "1,", ",", "", "2-", "1-9"})
    REQUIRE_THROWS_WITH(parse_task_ids(bad, 8), Catch::Contains("fix:"));
}

TEST_CASE("slurm: array layout, packing past MaxArraySize, scripts") {
  ArrayLayout a = array_layout(6, {0, 1, 2, 3, 4, 5}, 1001);
  REQUIRE(a.pack == 1);
  REQUIRE(index_ranges(a.elements) == "0-5");
  a = array_layout(2500, {0, 1, 1500, 2499}, 1001);
  REQUIRE(a.pack == 3);  // indices 0..833 < 1001
  REQUIRE(index_ranges(a.elements) == "0,500,833");
  REQUIRE(array_layout(1001, {1000}, 1001).pack == 1);
  REQUIRE(array_layout(1002, {1001}, 1001).pack == 2);
  a = array_layout(10, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 1001, 4);  // 4 CPUs per element: 4 tasks side by side
  REQUIRE(a.pack == 4);
  REQUIRE(index_ranges(a.elements) == "0-2");
  REQUIRE(array_layout(2500, {0}, 1001, 2).pack == 3);
  REQUIRE(index_ranges({3}) == "3");
  REQUIRE(index_ranges({1, 2, 4, 6, 7, 8}) == "1-2,4,6-8");
  REQUIRE(parse_max_array_size("AuthType = auth/munge\nMaxArraySize            = 40001\nMaxJobCount = 10000\n") == 40001);
  REQUIRE(parse_max_array_size("nothing here") == 0);
  REQUIRE(shell_quote("a b'c") == "'a b'\\''c'");
  SlurmSettings s;
  s.dir = "/scratch/plan";
  s.gradflow = "/opt/gradflow";
  s.name = "gradflow-plan";
  s.max_running = 4;
  s.cpus_per_task = 2;
  s.json = "/scratch/plan/report.json";
  const std::string array = slurm_array_script(s, array_layout(2500, {0, 1, 1500, 2499}, 1001));
  REQUIRE_THAT(array, Catch::Contains("#SBATCH --array=0,500,833%4\n"));
  REQUIRE_THAT(array, Catch::Contains("#SBATCH --cpus-per-task=2\n"));
  REQUIRE_THAT(array, Catch::Contains("first=$((SLURM_ARRAY_TASK_ID * 3))"));
  REQUIRE_THAT(array, Catch::Contains("if [ \"$last\" -gt 2499 ]; then last=2499; fi"));
  REQUIRE_THAT(array, Catch::Contains("exec '/opt/gradflow' task '/scratch/plan' \"$first-$last\""));
  REQUIRE_THAT(array, !Catch::Contains("--partition"));
  s.time = "02:00:00";
  s.mem = "64G";
  std::string merge = slurm_merge_script(s);
  REQUIRE_THAT(merge, Catch::Contains("exec '/opt/gradflow' merge '/scratch/plan' --json '/scratch/plan/report.json' -q"));
  // the array's per-element limits are not the merge job's: it has its own, else the cluster's defaults
  REQUIRE_THAT(slurm_array_script(s, array_layout(4, {0}, 1001)), Catch::Contains("#SBATCH --time=02:00:00\n"));
  REQUIRE_THAT(slurm_array_script(s, array_layout(4, {0}, 1001)), Catch::Contains("#SBATCH --mem=64G\n"));
  REQUIRE_THAT(merge, !Catch::Contains("--time") && !Catch::Contains("--mem"));
  s.gres = "gpu:1";  // a plan run with --device cuda: each array element asks for a GPU, the merge job does not
  REQUIRE_THAT(slurm_array_script(s, array_layout(4, {0}, 1001)), Catch::Contains("#SBATCH --gres=gpu:1\n"));
  REQUIRE_THAT(slurm_merge_script(s), !Catch::Contains("--gres"));
  s.merge_time = "00:10:00";
  s.merge_mem = "2G";
  merge = slurm_merge_script(s);
  REQUIRE_THAT(merge, Catch::Contains("#SBATCH --time=00:10:00\n") && Catch::Contains("#SBATCH --mem=2G\n"));
}

TEST_CASE("slurm: options outside Slurm's forms and paths with control characters are refused (issue 39 item 2)") {
  SlurmSettings s;
  s.dir = "/scratch/plan";
  s.gradflow = "/opt/gradflow";
  s.json = "/scratch/plan/report.json";
  REQUIRE_NOTHROW(validate_slurm_settings(s));
  s.partition = "gpu,debug";
  s.account = "proj-1.a_b";
  s.time = "1-02:30:00";
  s.merge_time = "30";
  s.mem = "64G";
  s.merge_mem = "2000";
  s.gres = "gpu:a100:2,gres/shard:1";
  REQUIRE_NOTHROW(validate_slurm_settings(s));
  for (const char* t : {"90", "90:30", "01:30:00", "2-12", "2-12:30", "2-12:30:15", "UNLIMITED", "infinite"}) {
    s.time = t;
    REQUIRE_NOTHROW(validate_slurm_settings(s));
  }
  const auto refused = [](SlurmSettings bad, const std::string& option) {
    try {
      validate_slurm_settings(bad);
      FAIL("accepted a bad " << option);
    } catch (const Error& e) {
      const std::string what = e.what();
      REQUIRE_THAT(what, Catch::Contains(option) && Catch::Contains("fix:"));
      REQUIRE(what.find('\n') == std::string::npos);  // one line, the newline shown as \x0A
    }
  };
  const std::string injected = "x\ntouch /tmp/pwned";
  SlurmSettings b = s;
  b.partition = injected;
  refused(b, "--partition");
  b = s, b.account = injected;
  refused(b, "--account");
  b = s, b.time = "01:00:00\n#SBATCH --uid=0";
  refused(b, "--time");
  b = s, b.time = "1h";
  refused(b, "--time");
  b = s, b.merge_time = injected;
  refused(b, "--merge-time");
  b = s, b.mem = "4 G";
  refused(b, "--mem");
  b = s, b.merge_mem = injected;
  refused(b, "--merge-mem");
  b = s, b.gres = "gpu:1 --uid=0";
  refused(b, "--gres");
  b = s, b.dir = "/scratch/a\nb";
  refused(b, "plan directory");
  b = s, b.json = "/scratch/r\r.json";
  refused(b, "--json");
  // 50,000 characters: refused by length before the (recursive) form check, which overflowed the stack (issue 60
  // item 13); a gres list of 200 characters is still checked by its form
  const std::string huge(50000, '1');
  b = s, b.time = huge;
  refused(b, "--time");
  b = s, b.partition = std::string(50000, 'a');
  refused(b, "--partition");
  b = s, b.gres = std::string(50000, 'g');
  refused(b, "--gres");
  b = s, b.gres = "gpu:1" + std::string(195, '1');
  REQUIRE_NOTHROW(validate_slurm_settings(b));
}

TEST_CASE("slurm: the plan directory quoted in directives, % kept literal in --output, hints quoted as needed") {
  REQUIRE(sbatch_word("/a b/c") == "\"/a b/c\"");
  REQUIRE(sbatch_word("q\"uo\\te") == "\"q\\\"uo\\\\te\"");
  REQUIRE(slurm_pattern_literal("/x/50%y") == "/x/50%%y");
  REQUIRE(shell_word("/scratch/plan-1") == "/scratch/plan-1");
  REQUIRE(shell_word("/scratch/my plan") == "'/scratch/my plan'");
  REQUIRE(shell_word("$(reboot)") == "'$(reboot)'");
  REQUIRE(task_command("/a b", 3) == "gradflow task '/a b' 3");
  SlurmSettings s;
  s.dir = "/scratch/my plan 50%x";
  s.gradflow = "/opt/gradflow";
  s.name = "gradflow-my plan 50%x";
  const std::string array = slurm_array_script(s, array_layout(2, {0, 1}, 1001));
  REQUIRE_THAT(array, Catch::Contains("#SBATCH --output=\"/scratch/my plan 50%%x/slurm/task-%A_%a.out\"\n"));
  REQUIRE_THAT(array, Catch::Contains("#SBATCH --job-name=\"gradflow-my plan 50%x\"\n"));
  REQUIRE_THAT(array, Catch::Contains("exec '/opt/gradflow' task '/scratch/my plan 50%x' \"$first-$last\""));
  REQUIRE_THAT(slurm_merge_script(s), Catch::Contains("#SBATCH --output=\"/scratch/my plan 50%%x/slurm/merge-%j.out\"\n"));
}
