// test_runner.cpp — real (tiny) configurations: results independent of the thread count, repetition 0 equal to a
// plain analyze, and --resume reusing finished files, refusing files made with other options, cleaning debris.
#include <catch2/catch.hpp>
#include <omp.h>

#include <filesystem>
#include <string>
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

TEST_CASE("runner: jobs side by side run one thread each, a job alone gets every thread") {
  // each job reports the team size its engine would get
  const auto jobs_of = [](int n) {
    std::vector<ResumableJob> jobs;
    for (int i = 0; i < n; ++i)
      jobs.push_back(ResumableJob{"job" + std::to_string(i), [] { return Json::object(); },
                                  [] { return Json{{"threads", omp_get_max_threads()}}; }});
    return jobs;
  };
  const auto threads_of = [&](int n, int threads, bool one_at_a_time) {
    RunnerOptions o;
    o.threads = threads;
    o.one_at_a_time = one_at_a_time;
    o.progress = false;
    std::vector<int> t;
    for (const Json& r : run_resumable(jobs_of(n), o, "job", nullptr)) t.push_back(r["threads"].get<int>());
    return t;
  };
  REQUIRE(threads_of(1, 2, false) == std::vector<int>{2});        // one configuration: the whole machine
  REQUIRE(threads_of(3, 2, false) == std::vector<int>{1, 1, 1});  // side by side: one each
  REQUIRE(threads_of(3, 2, true) == std::vector<int>{2, 2, 2});   // one at a time (a device): every thread each
  REQUIRE(threads_of(1, 1, false) == std::vector<int>{1});        // --threads 1 stays one thread
  REQUIRE(threads_of(3, 1, true) == std::vector<int>{1, 1, 1});
}

TEST_CASE("runner: a configuration alone on two threads gives the report of one thread, bit for bit") {
  // N = n*d = 1024 and explicit mode: the walk's products large enough for OpenBLAS to split them between threads,
  // every SVD on the two-stage route; the matrix-free chain and the gradients at the same size
  for (const char* mode : {"explicit", "matrix-free"}) {
    INFO(mode);
    PlanAxes axes;
    axes.placements = {"post"};
    axes.depths = {2};
    axes.seeds = 1;
    const auto plan = test::plan_of(axes, 64, 4, 16, mode);
    REQUIRE(plan.size() == 1);
    RunnerOptions one, two;
    one.threads = 1;
    two.threads = 2;
    one.progress = two.progress = false;
    const auto a = run_configurations(plan, one), b = run_configurations(plan, two);
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
