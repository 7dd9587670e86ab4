// analyze_plan.hpp — `analyze --mode streamed|matrix-free --plan DIR [--tasks T]`: the exact streamed sweep split across
// processes (docs/cluster.md, "Exact full-scale runs"). The sweep's identity rows, in chunks of --stream-rows, are
// cut into T contiguous ranges of whole chunks, one task each; a task (`gradflow task DIR IDS`) runs the whole
// analysis but only its chunks of the sweep, and writes their sums of squares as the sweep adds them
// (run/streamed_merge.hpp); `gradflow merge DIR` adds every task's in chunk order. The merged report equals the
// single-process `analyze --mode streamed` report bit for bit (timing and metadata aside), whatever T and whichever
// order the tasks ran in. `--mode matrix-free --plan` splits Hutchinson's probes the same way: chunks of --probe-chunk
// probes as tasks (run/hutchinson_merge.hpp), plus task 0 for the Lanczos values when any layer is spectral; the
// merge equals the single-process run with the same --probe-chunk bit for bit. The plan directory, task IDs, results, failures, Slurm scripts and the checks of what is
// merged (the plan's options and inputs by content, the gradflow that wrote it, one BLAS kernel and device) are the
// experiments' (experiments/plan_dir.hpp, runner.hpp).
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "gradflow/commands/analyze_command.hpp"
#include "gradflow/commands/experiment_command.hpp"

namespace gradflow {

struct AnalyzePlanOptions {
  std::string dir;  // --plan DIR ("": run here)
  int tasks = 0;    // --tasks T (0: the default, kDefaultStreamedTasks, at most one per chunk)
};
inline constexpr int kDefaultStreamedTasks = 16;

// Registers --plan and --tasks on analyze's `sub`.
void add_analyze_plan_options(CLI::App& sub, AnalyzePlanOptions& o);

// The analyze report's table (report/table.hpp) as a ReportWriters (no CSV: a merge refuses --csv).
extern const ReportWriters kAnalyzeWriters;

// `analyze ... --plan DIR`: writes the plan of the options `sub` parsed (its spec: the options given, --plan aside).
// Error (exit 2) when they are not a --mode streamed or matrix-free run, or name an output (--json belongs to `gradflow merge`).
void write_analyze_plan(const CLI::App& sub, const AnalyzeRequest& r, const AnalyzePlanOptions& plan);

// A task or the merge (how.plan) of an analyze plan whose manifest is `manifest` (run_plan_step hands it here).
SpecOutcome run_analyze_plan_step(const nlohmann::ordered_json& manifest, const SpecRun& how);

}  // namespace gradflow
