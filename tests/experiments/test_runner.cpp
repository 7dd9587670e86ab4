// test_runner.cpp — real (tiny) configurations: results independent of the thread count, repetition 0 equal to a
// plain analyze, and --resume reusing finished files, refusing files made with other options, cleaning debris.
#include <catch2/catch.hpp>
#include <omp.h>

#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "gradflow/experiments/runner.hpp"
#include "experiments/runner_fixtures.hpp"
#include "io/temp_dir.hpp"

using namespace gradflow;
using Json = nlohmann::ordered_json;

using test::tiny_plan;
using test::without_timing;

TEST_CASE("runner: identical reports with 1 and 2 threads, repetition 0 is a plain analyze") {
  const auto plan = tiny_plan(5);
  RunnerOptions one, two;
  one.threads = 1;
  two.threads = 2;
  one.progress = two.progress = false;
  const auto a = run_configurations(plan, one), b = run_configurations(plan, two);
  REQUIRE(a.size() == plan.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO(plan[i].file_name());
    REQUIRE(without_timing(a[i]) == without_timing(b[i]));
    REQUIRE(a[i]["config"]["seed"] == 5 + plan[i].repetition);
  }
  RunConfig rc = plan[0].rc;
  rc.init.seed = 5;
  REQUIRE(without_timing(analyze(rc)) == without_timing(a[0]));
}

TEST_CASE("runner: the threads are shared among the jobs that run at once") {
  const auto teams = [](int threads, int jobs, bool one_at_a_time) {
    const ThreadShare s = share_threads(threads, jobs, one_at_a_time);
    std::vector<int> t;
    for (int w = 0; w < s.side_by_side; ++w) t.push_back(s.engine_threads(w));
    return t;
  };
  REQUIRE(teams(16, 3, false) == std::vector<int>{6, 5, 5});  // 16 threads over 3 jobs, no thread idle
  REQUIRE(teams(16, 20, false) == std::vector<int>(16, 1));   // more jobs than threads: one each
  REQUIRE(teams(4, 2, false) == std::vector<int>{2, 2});
  REQUIRE(teams(2, 3, false) == std::vector<int>{1, 1});
  REQUIRE(teams(2, 1, false) == std::vector<int>{2});         // one configuration: the whole machine
  REQUIRE(teams(2, 3, true) == std::vector<int>{2});          // one at a time (a device): every thread
  REQUIRE(teams(1, 3, false) == std::vector<int>{1});         // --threads 1 stays one thread
  REQUIRE(teams(2, 0, false) == std::vector<int>{2});
  REQUIRE(share_threads(0, 1, false).threads == omp_get_max_threads());  // 0: every core OpenMP sees
}

TEST_CASE("runner: each job's engine gets its share of the threads as a team of its own") {
  // each job reports its worker, the team size its engine would get and the size of a team it starts: a nested team
  // of its share (not one thread, as without nesting), and the nesting limit is restored after the run
  const auto jobs_of = [](int n) {
    std::vector<ResumableJob> jobs;
    for (int i = 0; i < n; ++i)
      jobs.push_back(ResumableJob{"job" + std::to_string(i), [] { return Json::object(); }, [] {
                                    int team = 0;
#pragma omp parallel
#pragma omp single
                                    team = omp_get_num_threads();
                                    return Json{{"worker", omp_get_thread_num()}, {"threads", omp_get_max_threads()},
                                                {"team", team}};
                                  }});
    return jobs;
  };
  const int levels = omp_get_max_active_levels();
  for (const auto& [threads, n, one_at_a_time] :
       std::vector<std::tuple<int, int, bool>>{{5, 2, false}, {4, 2, false}, {2, 3, false}, {2, 1, false},
                                               {3, 3, true}, {1, 2, false}}) {
    INFO(threads << " threads, " << n << " jobs" << (one_at_a_time ? ", one at a time" : ""));
    RunnerOptions o;
    o.threads = threads;
    o.one_at_a_time = one_at_a_time;
    o.progress = false;
    const ThreadShare share = share_threads(threads, n, one_at_a_time);
    for (const Json& r : run_resumable(jobs_of(n), o, "job", nullptr)) {
      const int expected = share.engine_threads(r["worker"].get<int>());
      REQUIRE(r["threads"].get<int>() == expected);
      REQUIRE(r["team"].get<int>() == expected);
    }
    REQUIRE(omp_get_max_active_levels() == levels);
  }
}

namespace {

// the reports of `plan` on `threads` threads, no progress lines
std::vector<Json> reports_on(const std::vector<Configuration>& plan, int threads) {
  RunnerOptions o;
  o.threads = threads;
  o.progress = false;
  return run_configurations(plan, o);
}

// one configuration per placement, 2 layers at N = n*d = 1024: the walk's products large enough to be split between
// threads, every SVD on the two-stage route
std::vector<Configuration> plan_at_1024(std::vector<std::string> placements, const char* mode) {
  PlanAxes axes;
  axes.placements = std::move(placements);
  axes.depths = {2};
  axes.seeds = 1;
  return test::plan_of(axes, 64, 4, 16, mode);
}

}  // namespace

TEST_CASE("runner: configurations side by side on a share of two threads each give the 1-thread reports") {
  // two explicit configurations on --threads 4: each engine's products are split between the two threads of its
  // nested team (src/linalg/blas_threads.cpp), and every bit stays that of one thread
  const auto plan = plan_at_1024({"post", "pre"}, "explicit");
  REQUIRE(plan.size() == 2);
  const auto a = reports_on(plan, 1), b = reports_on(plan, 4);
  for (size_t i = 0; i < plan.size(); ++i) REQUIRE(without_timing(a[i]) == without_timing(b[i]));
}

TEST_CASE("runner: a configuration alone on two threads gives the report of one thread, bit for bit") {
  // explicit, and the matrix-free chain and the gradients at the same size
  for (const char* mode : {"explicit", "matrix-free"}) {
    INFO(mode);
    const auto plan = plan_at_1024({"post"}, mode);
    REQUIRE(plan.size() == 1);
    const auto a = reports_on(plan, 1), b = reports_on(plan, 2);
    REQUIRE(a[0]["config"]["mode"] == mode);
    REQUIRE(without_timing(a[0]) == without_timing(b[0]));
  }
}

TEST_CASE("runner: --resume reuses finished files bit for bit and skips them") {
  test::TempDir dir;
  const auto plan = tiny_plan();
  RunnerOptions o;
  o.resume_dir = dir.path() + "/r";
  o.progress = false;
  RunnerStats s1, s2;
  const auto first = run_configurations(plan, o, &s1);
  REQUIRE(s1.computed == static_cast<int>(plan.size()));
  // a killed run leaves a temporary file and misses some results: the rerun cleans and recomputes only those
  std::filesystem::remove(o.resume_dir + "/" + plan[1].file_name());
  test::write_bytes(o.resume_dir + "/" + plan[2].file_name() + ".tmp.999", "{\"partial");
  const auto second = run_configurations(plan, o, &s2);
  REQUIRE(s2.resumed == static_cast<int>(plan.size()) - 1);
  REQUIRE(s2.computed == 1);
  REQUIRE(!std::filesystem::exists(o.resume_dir + "/" + plan[2].file_name() + ".tmp.999"));
  for (size_t i = 0; i < plan.size(); ++i) REQUIRE(without_timing(first[i]) == without_timing(second[i]));
  for (size_t i = 0; i < plan.size(); ++i)
    if (i != 1) REQUIRE(first[i]["elapsed_seconds"] == second[i]["elapsed_seconds"]);  // loaded, not recomputed
}

TEST_CASE("runner: --resume refuses results computed with other options") {
  test::TempDir dir;
  RunnerOptions o;
  o.resume_dir = dir.path();
  o.progress = false;
  run_configurations(tiny_plan(0), o);
  auto other = tiny_plan(0);
  for (auto& c : other) c.rc.model.residual_scale = 0.5;
  REQUIRE(test::error_of([&] { run_configurations(other, o); }).find("other options") != std::string::npos);
  test::write_bytes(dir.file(other[0].file_name()), "garbage");
  REQUIRE(test::error_of([&] { run_configurations(tiny_plan(0), o); }).find("delete it") != std::string::npos);
}
