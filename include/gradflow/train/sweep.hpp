// sweep.hpp — `gradflow train-sweep`: a grid of training runs over placements × widths (--d-model 32,64,128; one by
// default) × depths × warmups × learning rates × seeds, in parallel over runs (OpenMP; every run single-threaded and deterministic, so the results do
// not depend on the thread count), with atomic per-run --resume files, and the report per (placement, depth) — per
// (placement, width, depth) when several widths are swept (learning-rate transfer over width in one report):
//   converged run  not diverged and final eval loss <= task floor + margin (--converge-margin, default 0.05)
//   diverged run   train.hpp's divergence: NaN/Inf anywhere, an activation above --diverge-activation, or a train
//                  loss above --diverge-loss (2 ln V)
//   a cell (placement, depth, lr, warmup) "converges" when every seed converges; it is "non-diverging" when no
//   seed diverges.
//   smallest_converging_warmup[lr]  the smallest warmup whose cell converges at that lr (null: none)
//   largest_stable_lr[warmup]       the largest lr whose cell converges at that warmup (null: none)
//   largest_non_diverging_lr[warmup], final eval loss mean ± std per cell, divergence rate per cell and overall,
//   and for each pair of placements a/b (in --placements order) the ratios of those warmups and learning rates.
//   optimal_lr[warmup]              per seed the fitted_optimal_lr of its final eval losses over the lrs, and over
//                                   the seeds the mean of log2 of it with its standard error (learning-rate
//                                   transfer: does the optimum move with depth, or across reports of two widths)
// docs/training.md states these definitions; docs/report-schema.md lists the fields.
#pragma once
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gradflow/experiments/report_files.hpp"
#include "gradflow/experiments/runner.hpp"
#include "gradflow/train/train.hpp"

namespace gradflow {

struct TrainRun {
  std::string placement;
  Index d_model = 0;         // the width when widths are swept (0: not swept, the model's --d-model)
  Index layers = 0;
  long warmup = 0;
  double lr = 0;
  int repetition = 0;  // seed = base seed + repetition
  TrainConfig tc;
  std::string file_name() const;  // "post_L6_w50_lr0.001_s0.json" ("post_d64_L6_..." when widths are swept)
};

struct TrainSweepOptions {
  std::vector<std::string> placements;
  std::vector<Index> widths;  // --d-model as a list of two or more (empty: not swept)
  std::vector<Index> layers;
  std::vector<long> warmups;
  std::vector<double> lrs;
  int seeds = 1;
  double converge_margin = 0.05;
  int threads = 0;          // threads, shared among the runs that run at once (0: every core)
  std::string resume_dir;   // --resume DIR
  bool progress = true;
  PlanStep plan;            // --plan DIR, `gradflow task`, `gradflow merge` (experiments/plan_dir.hpp)
};

// Runs placement-major, then width, depth, lr, warmup; repetitions innermost. base.init.seed is the base seed.
// make(placement, depth, width): width 0 when widths are not swept.
std::vector<TrainRun> plan_train_runs(const TrainSweepOptions& o,
                                      const std::function<TrainConfig(const std::string&, Index, Index)>& make);
// The train reports, in plan order (loaded from --resume files when present and matching). With o.plan as
// run_resumable (experiments/runner.hpp): empty after Write and Task; null reports where a partial merge has none
// (stats->partial lists them).
std::vector<nlohmann::ordered_json> run_train_runs(const std::vector<TrainRun>& runs, const TrainSweepOptions& o,
                                                   RunnerStats* stats = nullptr);
nlohmann::ordered_json train_sweep_report(const TrainSweepOptions& o, const std::vector<TrainRun>& runs,
                                          const std::vector<nlohmann::ordered_json>& reports);
// The learning rate that minimizes a final loss over a grid (any order; a loss NaN where the run has none or
// diverged): the vertex of the parabola in log2(lr) through the grid's lowest loss and its two neighbours in lr.
// NaN when the lowest loss lies at the grid's edge or a neighbour has no loss (no minimum inside the grid).
double fitted_optimal_lr(const std::vector<double>& lrs, const std::vector<double>& losses);
// One row per run: placement,[d_model,]layers,warmup,lr,seed,final_eval_loss,final_train_loss,converged,diverged,
// diverged_step (d_model when widths are swept)
std::string train_sweep_csv(const nlohmann::ordered_json& report);
void print_train_sweep_table(std::ostream& os, const nlohmann::ordered_json& report);

// The table and the CSV, for write_report (experiments/report_files.hpp), as compare/sweep's.
inline constexpr ReportWriters kTrainSweepWriters{print_train_sweep_table, train_sweep_csv};

}  // namespace gradflow
