// plan_dir.hpp — an experiment written down as a plan directory instead of run (docs/cluster.md), so that its
// tasks can run anywhere (a Slurm job array, GNU parallel, one task at a time) and be merged later:
//   DIR/plan.json            the manifest: gradflow's version and git commit, the spec (command and options, as
//                            `gradflow run` reads it), and the tasks in plan order, {"id", "name", "configuration"}
//   DIR/results/NAME.json    a finished task: the resumable runner's own result file (runner.hpp), written atomically,
//                            so `--resume DIR/results` on the same command reuses them and vice versa
//   DIR/failed/NAME.txt      the error of a task's last failed attempt (removed when it succeeds)
// A task's ID is its index in plan order; its name is the configuration's --resume file name (without .json).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gradflow/report/atomic_file.hpp"  // NamedPath

namespace gradflow {

inline constexpr int kPlanVersion = 1;

// What run_resumable does with a plan directory instead of running every job (RunnerOptions::plan).
struct PlanStep {
  enum class Kind { None, Write, Task, Merge };
  Kind kind = Kind::None;
  std::string dir;                  // the plan directory
  nlohmann::ordered_json manifest;  // Write: the manifest's head (command, spec, ...); the runner adds the tasks
  std::string task_ids;             // Task: the IDs to run ("3", "0-7", "1,4,9-11")
  std::vector<int> inject_fault;    // Task: IDs that fail on purpose, "injected fault": set only by tests (their
                                    // fault tool, tests/experiments/fault/), never by the command line
  bool allow_partial = false;       // Merge: merge what is there instead of refusing
  bool allow_mixed_kernels = false; // Merge: merge results computed on different BLAS kernels (their last bits differ)
};

std::string plan_manifest_path(const std::string& dir);                        // DIR/plan.json
std::string plan_results_dir(const std::string& dir);                          // DIR/results
std::string plan_failure_path(const std::string& dir, const std::string& name);  // DIR/failed/NAME.txt

// The head every manifest starts with: {"gradflow_plan": 1, "gradflow_version", "git_commit" (null: unknown)}.
nlohmann::ordered_json plan_manifest_head();
// DIR/plan.json, checked (Error naming the file and the fix when it is missing or not a plan).
nlohmann::ordered_json read_plan_manifest(const std::string& dir);
// IDs, in order, of the tasks of `manifest` without a complete result in DIR (a missing file, or one that is not a
// result of that task's configuration).
std::vector<int> plan_missing_tasks(const std::string& dir, const nlohmann::ordered_json& manifest);
// "3", "0-7", "1,4,9-11" -> sorted, distinct IDs, each < n; Error naming the item and the fix otherwise.
std::vector<int> parse_task_ids(const std::string& text, int n);
// Error (exit 2) naming the option and the fix when an output (`outputs`: option and path, "" = not given) is one of
// the plan's own files: DIR/plan.json, DIR/spec.json, or anything under DIR/results/, DIR/failed/, DIR/slurm/
// (compared by canonical path, symbolic links and "./" spellings resolved; plan.json and spec.json also as files).
// `merge --json`/`--csv` and `slurm --json`/`--csv` are checked before any work.
void check_outputs_outside_plan(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& outputs);
// The files the plan's runs read, as its spec's options name them (--weights, --input, --cotangent, --token-ids),
// for check_outputs (report/atomic_file.hpp): `gradflow slurm`'s merge job must not write into them.
std::vector<NamedPath> plan_input_paths(const nlohmann::ordered_json& manifest);
// The command that runs task `id` of DIR again, for messages: "gradflow task DIR ID".
std::string task_command(const std::string& dir, int id);

}  // namespace gradflow
