// runner.hpp — runs the configurations of an experiment, in parallel over configurations (OpenMP), and
// returns their analyze reports in plan order. Every configuration is deterministic and its engine does not depend
// on the thread count (the threads are shared among the configurations that run at once: share_threads), so the
// reports do not depend on --threads. With a resume directory, each finished
// configuration is written there atomically (DIR/<Configuration::file_name()>, {"configuration": expected_config,
// "blas_kernel": the kernels it ran on, "report": analyze report}) and a restarted run loads the files it finds
// (after checking "configuration" against the plan) instead of recomputing them. Results computed on different
// kernels are not mixed in one report (their last bits differ): refused, unless a merge allows it. With a plan step (plan_dir.hpp) the same jobs are written down as a plan
// directory (Write), or some of them run into its results (Task), or every result is loaded from it (Merge).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gradflow/experiments/plan.hpp"
#include "gradflow/experiments/plan_dir.hpp"

namespace gradflow {

struct RunnerOptions {
  int threads = 0;         // --threads: the threads to share among the configurations (0: every core OpenMP sees)
  bool one_at_a_time = false;  // one job after another, each with all `threads` (a device holds one job's products)
  std::string resume_dir;  // --resume DIR ("": results kept in memory only)
  bool progress = true;    // one line per finished configuration on stderr
  PlanStep plan;           // --plan DIR, `gradflow task`, `gradflow merge` (plan_dir.hpp)
  std::string kernel;      // the kernels this run computes on, as report_kernel names them ("": blas_kernel(), the
                           // CPU's); a --resume directory of other kernels' results is refused before any work
};

struct RunnerStats {
  int total = 0, resumed = 0, computed = 0;
  // Merge with allow_partial and tasks missing: {"tasks": n, "merged": k, "missing": [{"id", "name"}, ...]}
  nlohmann::ordered_json partial;
  // The kernels the reports were computed on (blas_kernel(), or "DEVICE (host: ...)"), each once, in plan order:
  // one unless a merge was allowed to mix them (PlanStep::allow_mixed_kernels); empty for files that predate them.
  std::vector<std::string> kernels;
};

// The kernels an analyze report was computed on: this process's BLAS kernel set (blas_kernel()), and the device
// when the report's config names one ("cuda (host: OpenBLAS 0.3.21 Haswell)"): what its last bits depend on.
std::string report_kernel(const nlohmann::ordered_json& report);
// What a report records of RunnerStats::kernels under "blas_kernel": the kernel's name, a list when a merge mixed
// several, null when no result recorded one (files written before gradflow did).
nlohmann::ordered_json kernels_json(const std::vector<std::string>& kernels);

std::vector<nlohmann::ordered_json> run_configurations(const std::vector<Configuration>& configs,
                                                       const RunnerOptions& opts, RunnerStats* stats = nullptr);

// How run_resumable shares `threads` (0: every core OpenMP sees) among `jobs` jobs: at most one job per thread runs
// at once, and each gets an equal share of the threads for its engine's own OpenMP team (a nested team), the first
// `threads % side_by_side` of them one more: 3 jobs on 16 threads run side by side on 6, 5 and 5 threads; 20 jobs
// on 16 threads one thread each; one job alone, or jobs one at a time (a device), every thread.
struct ThreadShare {
  int side_by_side = 1;  // jobs running at once
  int threads = 1;       // threads in all
  // the OpenMP team of the job on worker `w` (0 <= w < side_by_side)
  int engine_threads(int w) const { return threads / side_by_side + (w < threads % side_by_side ? 1 : 0); }
  int most() const { return engine_threads(0); }  // the largest team (for memory estimates)
};
ThreadShare share_threads(int threads, int jobs, bool one_at_a_time);

// The engine under run_configurations and train-sweep: one job per result, computed in parallel (the threads
// shared as share_threads says), resumable from opts.resume_dir as described above.
struct ResumableJob {
  std::string name;                                        // DIR/<name>.json; also the job's name in messages
  std::function<nlohmann::ordered_json()> configuration;   // what a resumed file must have been computed with
  std::function<nlohmann::ordered_json()> compute;         // the job's report
};
// One job per item of a plan (a Configuration, a train-sweep's TrainRun: anything with file_name() "<name>.json"),
// named after its result file, computing configuration(item) and compute(item). The jobs refer to the items, which
// must outlive them.
template <class Item, class ConfigurationOf, class ComputeOf>
std::vector<ResumableJob> resumable_jobs(const std::vector<Item>& items, ConfigurationOf configuration,
                                         ComputeOf compute) {
  std::vector<ResumableJob> jobs;
  jobs.reserve(items.size());
  for (const Item& item : items) {
    const std::string file = item.file_name();
    jobs.push_back(ResumableJob{file.substr(0, file.size() - 5), [&item, configuration] { return configuration(item); },
                                [&item, compute] { return compute(item); }});
  }
  return jobs;
}
// noun names a job in messages ("configuration", "run"); describe(report) may add to a progress line (may be null).
// The first failed job's Error is rethrown, naming the job, after every job has finished.
// With opts.plan: Write and Task return an empty vector (nothing to report); Merge returns every report in plan
// order, null where a task has no result (only with allow_partial; otherwise an Error listing the missing tasks).
std::vector<nlohmann::ordered_json> run_resumable(const std::vector<ResumableJob>& jobs, const RunnerOptions& opts,
                                                  const std::string& noun,
                                                  const std::function<std::string(const nlohmann::ordered_json&)>& describe,
                                                  RunnerStats* stats = nullptr);

// A finished job's report from its result file at `path`, or null when there is none; Error when the file is not a
// result file, was computed with another configuration than `expected`, or its report fails report_problem.
// `kernel`, when given, receives the file's "blas_kernel" (the kernels it was computed on; "" in files written before
// gradflow recorded them).
// Why a result's report cannot be merged or resumed ("" when it can): not an object, no "config" object, "layers"
// not a list of objects, a number that is not finite, or a layer's gradient norm (grad_norm, input_grad_norm, ...,
// and every entry of grad_norms, param_grad_norms, attention_grad_norms) that is not a non-negative number.
std::string report_problem(const nlohmann::ordered_json& report);
nlohmann::ordered_json load_result_file(const std::string& path, const nlohmann::ordered_json& expected,
                                        std::string* kernel = nullptr);

// run_config_json of `rc` before its engine is chosen: what a resumed file must have been computed with.
nlohmann::ordered_json expected_config(const RunConfig& rc);

}  // namespace gradflow
