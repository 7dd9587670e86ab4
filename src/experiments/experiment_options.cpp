// experiment_options.cpp — see experiment_options.hpp.
#include "gradflow/experiments/experiment_options.hpp"

#include "gradflow/core/error.hpp"
#include "gradflow/core/max_threads.hpp"
#include "gradflow/experiments/plan.hpp"
#include "gradflow/report/path_option.hpp"
#include "gradflow/run/analysis_options.hpp"
#include "gradflow/run/model_options.hpp"
#include "gradflow/run/run_inputs.hpp"

namespace gradflow {
using Json = nlohmann::ordered_json;

namespace {

std::string long_name(const CLI::Option* opt) {
  const auto& l = opt->get_lnames();
  return l.empty() ? std::string() : l.front();
}

}  // namespace

Json given_options(const CLI::App& sub) {
  Json j = Json::object();
  for (const CLI::Option* opt : sub.get_options()) {
    const std::string name = long_name(opt);
    // where the outputs went is not part of the experiment: a spec never carries it (so rerunning a report never
    // writes over it)
    if (opt->count() == 0 || name.empty() || name == "help") continue;
    if (name == "json" || name == "csv" || name == "resume") continue;
    if (name == "threads" || name == "quiet") continue;  // how it ran, not what: the report is the same for every
                                                         // --threads (docs/experiments.md) and with or without -q
    if (name == "plan") continue;                        // where it runs
    if (name == "bars" || name == "no-bars" || name == "narrow") continue;  // how its table looks
    if (opt->get_expected_min() == 0) {
      j[name] = true;
      continue;
    }
    std::string v;
    for (const auto& r : opt->results()) v += (v.empty() ? "" : ",") + r;
    j[name] = v;
  }
  return j;
}

void add_experiment_options(CLI::App& sub, ExperimentOptions& o) {
  add_model_options(sub, o.model);
  sub.add_option("--seeds", o.seeds, "repetitions per configuration (repetition r uses seed = --seed + r), or auto: "
                 "batches of seeds until every interval meets --ci-target (docs/experiments.md)")
      ->capture_default_str();
  sub.add_option("--ci-target", o.ci_target, "with --seeds auto: the relative half-width every interval must reach "
                 "(of the geometric mean for positive quantities), e.g. 0.05");
  sub.add_option("--ci-abs", o.ci_abs, "with --seeds auto: an absolute half-width that also suffices (quantities near "
                 "zero)");
  sub.add_option("--max-seeds", o.max_seeds, "with --seeds auto: stop at this many seeds")->capture_default_str();
  sub.add_option("--seed-batch", o.seed_batch, "with --seeds auto: seeds per batch (the first batch too)")
      ->capture_default_str();
  sub.add_option("--ci-metrics", o.ci_metrics, "with --seeds auto: the scalar metrics whose intervals must meet the "
                 "target, comma-separated")->capture_default_str();
  sub.add_option("--json", o.json, "write the experiment report (mean/std over seeds, ratios, fits, spec) here")->check(non_empty_path());
  sub.add_option("--csv", o.csv, "write the long-format CSV (placement,depth,[param,value,]layer,metric,mean,std,n, then the interval columns and a ratio's verdict)")->check(non_empty_path());
  sub.add_option("--resume", o.resume,
                 "keep each finished configuration in DIR (written atomically); a rerun skips those already there")
      ->check(non_empty_path());
  sub.add_option("--threads", o.threads,
                 "threads, shared among the configurations that run at once (default: all cores; one configuration "
                 "alone gets them all; results do not depend on it)")
      ->check(CLI::Range(0, kMaxThreads));
  sub.add_flag("--gradients-only", o.gradients_only, "skip the explicit Jacobians (gradient norms only, ~100x faster)");
  sub.add_option("--device", o.device, "where each configuration's explicit products (or streamed/matrix-free "
                                       "chain) run: cpu | cuda (one configuration at a time; docs/cuda.md)")
      ->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  add_sensitivity_options(sub, o.model.rc.analysis);
  sub.add_flag("-q,--quiet", o.quiet, "no table, no progress");
  add_plan_option(sub, o.plan);
}

int parse_seeds(const CLI::App& sub, const ExperimentOptions& o, AutoSeeds& a) {
  a = AutoSeeds{};
  a.enabled = o.seeds == "auto";
  const char* const auto_only[] = {"--ci-target", "--ci-abs", "--max-seeds", "--seed-batch", "--ci-metrics"};
  if (!a.enabled) {
    for (const char* name : auto_only) {
      const CLI::Option* opt = sub.get_option_no_throw(name);
      require(!opt || opt->count() == 0, std::string(name) + " applies to --seeds auto only; fix: give --seeds auto, "
                                         "or drop " + name);
    }
    const bool digits = !o.seeds.empty() && o.seeds.size() <= 7 &&
                        o.seeds.find_first_not_of("0123456789") == std::string::npos;
    require(digits && std::stoi(o.seeds) >= 1 && std::stoi(o.seeds) <= 1000000,
            "--seeds '" + o.seeds + "' is not a number of seeds from 1 to 1000000 or auto; fix: e.g. --seeds 5, or "
            "--seeds auto --ci-target 0.05");
    return std::stoi(o.seeds);
  }
  const CLI::Option* target = sub.get_option_no_throw("--ci-target");
  require(target && target->count() > 0, "--seeds auto needs --ci-target, the relative half-width to reach; fix: e.g. "
                                         "--seeds auto --ci-target 0.05 --max-seeds 200");
  a.ci_target = o.ci_target;
  a.ci_abs = o.ci_abs;
  a.max_seeds = o.max_seeds;
  a.batch = o.seed_batch;
  a.metrics = split_list(o.ci_metrics, "--ci-metrics");
  return a.batch;  // the settings themselves are checked where every caller passes: run_experiment (check_auto_seeds)
}

void add_plan_option(CLI::App& sub, std::string& dir) {
  sub.add_option("--plan", dir,
                 "write the plan (one task per configuration) into DIR instead of running it; then gradflow task, "
                 "slurm, merge (docs/cluster.md)")
      ->check(non_empty_path());
}

void axes_from_checkpoint(ExperimentOptions& o, PlanAxes& axes, const std::string& placements_option,
                          bool placements_given, bool layers_given) {
  RunConfig& rc = o.model.rc;
  if (rc.weights.empty()) return;
  if (!o.model.max_memory.empty()) rc.analysis.max_memory_bytes = parse_memory_size(o.model.max_memory, "--max-memory");
  rc.files = load_run_files(rc);  // refused here when loading alone would not fit
  const Checkpoint& ck = *rc.files->weights;
  if (!layers_given) axes.depths = {checkpoint_sizes(ck.tensors, ck.path).layers};
  const std::string& block = ck.arch.placement;  // "" for torch-encoder
  if (block.empty()) return;
  if (!placements_given) {
    axes.placements = {block};
    return;
  }
  std::string given;
  for (const auto& p : axes.placements) given += (given.empty() ? "" : ",") + p;
  for (const auto& p : axes.placements)
    require(p == block, placements_option + " " + given + " contradicts the " + ck.format + " checkpoint '" + ck.path +
                            "' (its block is " + block + "); fix: drop " + placements_option +
                            " (the checkpoint fixes it) or pass " + placements_option + " " + block);
}

}  // namespace gradflow
