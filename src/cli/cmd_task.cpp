// cmd_task.cpp — `gradflow task DIR IDS [--threads N] [-q]`: runs tasks IDS ("3", "0-7", "1,4,9-11") of the plan in
// DIR (written with --plan) through the experiment's own options and resumable runner (the library's
// run_plan_step): each result is written atomically to DIR/results/<name>.json; a task that has one already does
// nothing; several tasks run side by side, each engine serial, on --threads threads (default: SLURM_CPUS_PER_TASK,
// else every core), so the results do not depend on the thread count (docs/cluster.md).
#include <cstdlib>

#include "process/runtime_env.hpp"
#include "cli/commands.hpp"
#include "cli/experiment_run.hpp"
#include "gradflow/core/error.hpp"

namespace gradflow::cli {
namespace {
using Json = nlohmann::ordered_json;

struct TaskOptions {
  std::string dir, ids;
  int threads = -1;
  bool quiet = false;
};

// SLURM_CPUS_PER_TASK when Slurm set it, else 0 (every core).
int allocation_threads() {
  const char* v = std::getenv("SLURM_CPUS_PER_TASK");
  if (!v || !*v) return 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  require(end && *end == '\0' && n >= 1 && n <= kMaxThreads,
          "SLURM_CPUS_PER_TASK '" + std::string(v) + "' is not a thread count; fix: give --threads N");
  return static_cast<int>(n);
}

void run_task(const TaskOptions& o) {
  const Json manifest = read_plan_manifest(o.dir);
  parse_task_ids(o.ids, static_cast<int>(manifest["tasks"].size()));  // refused before anything runs
  SpecRun how = command_line_run();
  how.plan.kind = PlanStep::Kind::Task;
  how.plan.dir = o.dir;
  how.plan.task_ids = o.ids;
  how.threads = o.threads >= 0 ? o.threads : allocation_threads();
  how.quiet = o.quiet;
  hand_out(run_plan_step(how), TerminalOptions{});  // a task writes its result, no table
}

}  // namespace

void setup_task(CLI::App& app) {
  auto opts = std::make_shared<TaskOptions>();
  auto* sub = app.add_subcommand("task", "run tasks of a plan written with --plan (docs/cluster.md)");
  sub->add_option("dir", opts->dir, "the plan directory")->required();
  sub->add_option("ids", opts->ids, "task IDs: 3, 0-7 or 1,4,9-11")->required();
  sub->add_option("--threads", opts->threads, "threads, shared among the tasks that run at once (default: "
                                              "SLURM_CPUS_PER_TASK, else all cores; results do not depend on it)")
      ->check(CLI::Range(0, kMaxThreads));
  sub->add_flag("-q,--quiet", opts->quiet, "no progress");
  sub->callback([opts] { run_task(*opts); });
}

}  // namespace gradflow::cli
