// cmd_train_sweep.cpp — `gradflow train-sweep --placements post,pre --layers 6,12 --warmup 0,50,200 --lr 1e-4,1e-3
// --seeds 3 [train options] --json sweep.json [--csv sweep.csv] [--resume DIR]`: the grid of training runs,
// the per (placement, depth) warmup / learning-rate summary (src/train/sweep.hpp), a table on stdout.
#include <cmath>
#include <iostream>
#include <type_traits>

#include "process/interrupt.hpp"
#include "process/runtime_env.hpp"
#include "cli/commands.hpp"
#include "cli/experiment_options.hpp"
#include "cli/plan_options.hpp"
#include "cli/train_options.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/experiments/plan.hpp"
#include "gradflow/experiments/spec.hpp"
#include "gradflow/report/atomic_file.hpp"
#include "gradflow/train/sweep.hpp"

namespace gradflow::cli {
namespace {
using Json = nlohmann::ordered_json;
struct SweepCmdOptions {
  TrainFlags flags;
  std::string placements = "post,pre", layers = "6", warmup = "0,100", lr = "1e-3";
  TrainSweepOptions sweep;
  std::string json, csv, spec_file;
  bool quiet = false;
  PlanFlags plan;
};

template <typename T>
std::vector<T> parse_list(const std::string& text, const std::string& option, bool positive) {
  std::vector<T> out;
  for (const auto& item : split_list(text, option)) {
    size_t pos = 0;
    double v = 0;
    try {
      v = std::stod(item, &pos);
    } catch (const std::exception&) {
      pos = 0;
    }
    require(pos == item.size() && std::isfinite(v) && (positive ? v > 0 : v >= 0),
            option + " item '" + item + "' is not a " + (positive ? "positive" : "non-negative") +
                " number; fix: a comma-separated list such as " + (option == "--lr" ? "1e-4,1e-3" : "0,100"));
    if (std::is_integral<T>::value)
      require(v == static_cast<double>(static_cast<long>(v)), option + " item '" + item + "' is not an integer; fix: e.g. 0,100");
    out.push_back(static_cast<T>(v));
  }
  return out;
}

void run_train_sweep(const CLI::App& sub, SweepCmdOptions o) {
  o.sweep.placements = split_list(o.placements, "--placements");
  o.flags.model.run_placements = o.sweep.placements;  // a placement's own option must apply to one of them
  o.sweep.layers = parse_list<Index>(o.layers, "--layers", true);
  o.sweep.warmups = parse_list<long>(o.warmup, "--warmup", false);
  o.sweep.lrs = parse_list<double>(o.lr, "--lr", true);
  o.sweep.progress = !o.quiet;
  const auto runs = plan_train_runs(o.sweep, [&](const std::string& p, Index L) { return resolve_train(o.flags, p, L); });
  check_outputs({{"--json", o.json}, {"--csv", o.csv}}, {{"the spec", o.spec_file}});
  process::set_interrupt_note(
      o.sweep.resume_dir.empty()
          ? "no run was kept; fix: rerun with --resume DIR, which keeps each finished run and continues from them"
          : "finished runs are kept in " + o.sweep.resume_dir + "; rerun the same command to continue from them");
  const Json spec{{"gradflow_spec", kSpecVersion}, {"command", "train-sweep"}, {"options", given_options(sub)}};
  o.sweep.plan = plan_step(o.plan, spec, o.spec_file,
                           {{"--json", !o.json.empty()}, {"--csv", !o.csv.empty()},
                            {"--resume", !o.sweep.resume_dir.empty()}, {"--threads", sub.count("--threads") > 0}});
  if (o.sweep.plan.kind == PlanStep::Kind::Task)
    process::set_interrupt_note("finished tasks are kept in " + plan_results_dir(o.plan.dir) + "; rerun the same "
                                "gradflow task to continue from them");
  RunnerStats stats;
  auto reports = run_train_runs(runs, o.sweep, &stats);
  if (o.sweep.plan.kind == PlanStep::Kind::Write || o.sweep.plan.kind == PlanStep::Kind::Task) return;
  std::vector<TrainRun> present = runs;  // a partial merge: the runs that have a result
  if (!stats.partial.is_null()) {
    present.clear();
    std::vector<Json> kept;
    for (size_t i = 0; i < runs.size(); ++i)
      if (!reports[i].is_null()) present.push_back(runs[i]), kept.push_back(std::move(reports[i]));
    reports = std::move(kept);
  }
  auto rep = train_sweep_report(o.sweep, present, reports);
  if (!stats.partial.is_null()) rep["partial"] = stats.partial;
  if (!o.spec_file.empty()) {  // `gradflow run SPEC`: the report records its spec (so `run report.json` reruns it)
    rep["spec"] = load_spec(o.spec_file);
    rep["spec_file"] = o.spec_file;
  }
  write_report(rep, kTrainSweepWriters, {o.json, o.csv, !o.quiet}, std::cout);
}
}  // namespace

void setup_train_sweep(CLI::App& app) {
  auto opts = std::make_shared<SweepCmdOptions>();
  auto* sub = app.add_subcommand("train-sweep", "train a grid of placements x depths x warmups x learning rates x seeds");
  sub->add_option("--placements", opts->placements, "comma-separated placements")->capture_default_str();
  sub->add_option("--layers", opts->layers, "comma-separated depths")->capture_default_str();
  sub->add_option("--warmup", opts->warmup, "comma-separated warmup lengths")->capture_default_str();
  sub->add_option("--lr", opts->lr, "comma-separated peak learning rates")->capture_default_str();
  sub->add_option("--seeds", opts->sweep.seeds, "repetitions per cell (seed = --seed + r)")->capture_default_str();
  sub->add_option("--converge-margin", opts->sweep.converge_margin, "converged: final eval loss <= floor + MARGIN")
      ->capture_default_str();
  sub->add_option("--threads", opts->sweep.threads,
                  "threads, shared among the runs that run at once (0: every core; results do not depend on it)")
      ->check(CLI::Range(0, process::kMaxThreads))
      ->capture_default_str();
  sub->add_option("--resume", opts->sweep.resume_dir, "keep each finished run in DIR and reuse it when restarted")->check(non_empty_path());
  add_train_flags(*sub, opts->flags);
  sub->add_option("--json", opts->json, "write the sweep report to this file")->check(non_empty_path());
  sub->add_option("--csv", opts->csv, "write one row per run")->check(non_empty_path());
  sub->add_flag("-q,--quiet", opts->quiet, "no progress, no table");
  sub->add_option("--spec-file", opts->spec_file, "set by `gradflow run`: the spec this sweep comes from");
  add_plan_options(*sub, opts->plan);
  sub->callback([sub, opts] { run_train_sweep(*sub, *opts); });
}

}  // namespace gradflow::cli
