// experiment_command.cpp — see experiment_command.hpp. compare's and sweep's options and run (the library's
// run_experiment, experiments/run_experiment.hpp), train-sweep's (train/sweep.hpp), and the plan step they share.
#include "gradflow/commands/experiment_command.hpp"

#include <cmath>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "gradflow/core/decimal.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/core/max_threads.hpp"
#include "gradflow/experiments/experiment.hpp"
#include "gradflow/experiments/experiment_options.hpp"
#include "gradflow/experiments/plan.hpp"
#include "gradflow/experiments/run_experiment.hpp"
#include "gradflow/experiments/runner.hpp"
#include "gradflow/experiments/spec.hpp"
#include "gradflow/report/atomic_file.hpp"
#include "gradflow/report/path_option.hpp"
#include "gradflow/run/analysis_options.hpp"
#include "gradflow/run/model_options.hpp"
#include "gradflow/run/run_inputs.hpp"
#include "gradflow/train/sweep.hpp"
#include "gradflow/train/train_options.hpp"

namespace gradflow {
namespace {
using Json = nlohmann::ordered_json;

void note(const SpecRun& how, const std::string& text) {
  if (how.interrupt_note) how.interrupt_note(text);
}

// What an interrupt keeps of an experiment run with `plan` and --resume `resume` (noun: "configuration", "run"), and
// how to continue.
std::string interrupt_note(const PlanStep& plan, const std::string& resume, const std::string& noun) {
  switch (plan.kind) {
    case PlanStep::Kind::Task:
      return "finished tasks are kept in " + plan_results_dir(plan.dir) + "; rerun the same gradflow task to continue "
             "from them";
    case PlanStep::Kind::Merge:
      return "nothing was written; run the same gradflow merge again (it only reads the results)";
    case PlanStep::Kind::Write:
      return "no plan was written unless " + plan_manifest_path(plan.dir) + " exists; run the same command again";
    case PlanStep::Kind::None:
      break;
  }
  return resume.empty() ? "no " + noun + " was kept; fix: rerun with --resume DIR, which keeps each finished one and "
                          "continues from them when run again"
                        : "finished " + noun + "s are kept in " + resume + "; rerun the same command to continue "
                          "from them";
}

// The runner's plan step: how.plan's (a task or a merge), else a plan to write into --plan DIR (`plan_dir`), else
// none. Writing a plan: the manifest's head records `spec` (the experiment's {"gradflow_spec", "command",
// "options"}) and, for `gradflow run SPEC`, the spec file's path and content; the options that would have no effect
// with --plan (given: true) are refused, naming where they belong.
PlanStep plan_step(const SpecRun& how, const std::string& plan_dir, const Json& spec,
                   const std::vector<std::pair<std::string, bool>>& no_effect) {
  PlanStep step = how.plan;
  if (step.kind == PlanStep::Kind::Task || step.kind == PlanStep::Kind::Merge) return step;
  if (step.kind == PlanStep::Kind::None) {
    if (plan_dir.empty()) return step;
    step.dir = plan_dir;
  }
  for (const auto& [option, given] : no_effect)
    require(!given, option + " has no effect with --plan (nothing runs now); fix: give " +
                        (option == "--threads" ? std::string("it to gradflow task (default: SLURM_CPUS_PER_TASK)")
                         : option == "--resume" ? std::string("none: the plan's results are its resume files")
                                                : std::string("it to gradflow merge")));
  step.kind = PlanStep::Kind::Write;
  step.manifest = plan_manifest_head();
  step.manifest["command"] = spec["command"];
  step.manifest["spec"] = spec;
  if (!how.spec_file.empty())  // `gradflow run SPEC --plan DIR`: the merged report records the spec file as run's does
    step.manifest["spec_file"] = Json{{"path", how.spec_file}, {"content", load_spec(how.spec_file)}};
  return step;
}

// The options' own outputs and threads, with how's over them; true when --threads was given (by either). A task or
// merge of a plan takes no output from the plan's spec (a plan.json is a file someone else may have written): only
// the command line's --json/--csv (merge) name outputs, and the plan's results/ are the tasks' resume files.
template <typename O>
bool apply_run(O& o, std::string& resume, int& threads, const CLI::App& sub, const SpecRun& how) {
  if (how.plan.kind == PlanStep::Kind::Task || how.plan.kind == PlanStep::Kind::Merge) {
    o.json.clear();
    o.csv.clear();
    resume.clear();
  }
  if (!how.json.empty()) o.json = how.json;
  if (!how.csv.empty()) o.csv = how.csv;
  if (!how.resume.empty()) resume = how.resume;
  if (how.threads >= 0) threads = how.threads;
  if (how.quiet) o.quiet = true;
  return how.threads >= 0 || sub.count("--threads") > 0;
}

// --- compare and sweep ------------------------------------------------------------------------------------------

struct CompareSweepOptions {
  ExperimentOptions exp;
  std::string placements = "post,pre", layers = "6,12,24";  // compare
  std::string param, values, param2, values2;               // sweep
};

Index parse_depth(const std::string& s) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  require(used == s.size() && v >= 1, "--layers item '" + s + "' is not a positive integer; fix: e.g. --layers 6,12,24");
  return static_cast<Index>(v);
}

// compare: placements × depths; sweep: placements × values of --param [× values of --param2]. --weights: the
// checkpoint's depth and block unless the options say.
PlanAxes experiment_axes(const CLI::App& sub, const std::string& kind, const CompareSweepOptions& o,
                         ExperimentOptions& exp) {
  PlanAxes axes;
  if (kind == "compare") {
    axes.placements = split_list(o.placements, "--placements");
    for (const auto& s : split_list(o.layers, "--layers")) axes.depths.push_back(parse_depth(s));
    axes_from_checkpoint(exp, axes, "--placements", sub.get_option("--placements")->count() > 0,
                         sub.get_option("--layers")->count() > 0);
    return axes;
  }
  axes.placements = split_list(o.exp.model.rc.model.placement, "--placement");
  axes.depths = {o.exp.model.rc.model.layers};
  // an option given beside the sweep of it would be overridden by every value
  const std::string axes_options[2][3] = {{o.param, "--param", "--values"}, {o.param2, "--param2", "--values2"}};
  for (const auto& [param, flag, values] : axes_options) {
    const CLI::Option* fixed = param.empty() ? nullptr : sub.get_option_no_throw("--" + param);
    require(!fixed || fixed->count() == 0, "--" + param + " is given and swept (" + flag + " " + param + "): each of " +
                                               values + " replaces it; fix: drop --" + param + ", or add its value to " +
                                               values);
  }
  axes.param = o.param;
  axes.values = split_list(o.values, "--values");
  if (!o.param2.empty()) {
    require(o.param2 != o.param, "--param2 " + o.param2 + " is --param too; fix: sweep two different options (e.g. "
                                 "--param init-scale --param2 layers), or list every value in --values");
    axes.param2 = o.param2;
    axes.values2 = split_list(o.values2, "--values2");
  }
  axes_from_checkpoint(exp, axes, "--placement", exp.model.given.count("placement") > 0,
                       exp.model.given.count("layers") > 0);
  return axes;
}

SpecOutcome run_compare_sweep(const CLI::App& sub, const std::string& kind, const CompareSweepOptions& given,
                              const SpecRun& how) {
  ExperimentOptions o = given.exp;
  const bool threads_given = apply_run(o, o.resume, o.threads, sub, how);
  const PlanAxes axes = experiment_axes(sub, kind, given, o);
  const RunConfig& rc = o.model.rc;
  check_sensitivity_options(sub, rc.analysis);
  const BackendKind device = parse_backend_kind(o.device);
  require(!(o.gradients_only && device != BackendKind::Cpu),
          "--device " + o.device + " runs the Jacobian products, which --gradients-only skips (its gradients run on "
          "the CPU); fix: drop --device or --gradients-only");
  std::vector<NamedPath> inputs = run_input_paths(rc);
  inputs.push_back({"the spec", how.spec_file});
  check_outputs({{"--json", o.json}, {"--csv", o.csv}}, inputs);
  ExperimentSettings e;
  e.kind = kind;
  e.model = o.model;
  e.axes = axes;
  e.axes.seeds = parse_seeds(sub, o, e.auto_seeds);
  e.axes.base_seed = o.model.rc.init.seed;
  e.gradients_only = o.gradients_only;
  e.backend = device;
  e.runner.threads = o.threads;
  e.runner.resume_dir = o.resume;
  e.runner.progress = !o.quiet;
  e.spec = Json{{"gradflow_spec", kSpecVersion}, {"command", kind}, {"options", given_options(sub)}};
  if (!how.verdicts.is_null()) e.spec["verdicts"] = how.verdicts;  // decided on the report (experiment.cpp)
  e.spec_file = how.spec_file;
  e.runner.plan = plan_step(how, o.plan, e.spec,
                            {{"--json", !o.json.empty()}, {"--csv", !o.csv.empty()}, {"--resume", !o.resume.empty()},
                             {"--threads", threads_given}});
  note(how, interrupt_note(e.runner.plan, o.resume, "configuration"));
  SpecOutcome out;
  out.report = run_experiment(std::move(e));  // null: a plan written, or tasks of one run
  out.writers = kExperimentWriters;
  out.files = {o.json, o.csv, !o.quiet};
  return out;
}

ExperimentRun add_compare_sweep(CLI::App& sub, const std::string& kind) {
  auto opts = std::make_shared<CompareSweepOptions>();
  add_experiment_options(sub, opts->exp);
  if (kind == "compare") {  // compare takes lists where analyze takes one placement and one depth
    sub.remove_option(sub.get_option("--placement"));
    sub.remove_option(sub.get_option("--layers"));
    sub.add_option("--placements,--placement", opts->placements,
                   "comma-separated placements (see `gradflow placements`)")
        ->capture_default_str();
    sub.add_option("--layers", opts->layers, "comma-separated depths L")->capture_default_str();
  } else {
    // one spelling for a list in every experiment command: --placements means what --placement does here
    alias_model_option(sub, opts->exp.model, "placement", "--placements")
        ->description("placement, or several comma-separated (ratios between them); --placements: the same");
    std::vector<std::string> sweepable;
    for (const ModelOption& m : model_options())
      if (m.name != "placement" && m.name != "seed" && m.name != "max-memory") sweepable.push_back(m.name);
    sub.add_option("--param", opts->param, "the model option to vary: init-scale | layers | d-model | residual-scale | "
                                           "seq-len | init | any model flag")
        ->required()
        ->check(CLI::IsMember(sweepable));
    sub.add_option("--values", opts->values, "comma-separated values, e.g. 1,0.5,inv-sqrt-2L")->required();
    auto* param2 = sub.add_option("--param2", opts->param2,
                                  "a second model option to vary: every --values with every --values2 (a 2-D sweep)")
                       ->check(CLI::IsMember(sweepable));
    auto* values2 = sub.add_option("--values2", opts->values2, "comma-separated values of --param2, e.g. 0.25,0.5,1,2");
    param2->needs(values2);
    values2->needs(param2);
  }
  const CLI::App* parsed = &sub;
  return [parsed, kind, opts](const SpecRun& how) { return run_compare_sweep(*parsed, kind, *opts, how); };
}

// --- train-sweep ------------------------------------------------------------------------------------------------

struct TrainSweepCommand {
  TrainFlags flags;
  std::string placements = "post,pre", layers = "6", warmup = "0,100", lr = "1e-3";
  std::string widths;  // --d-model: one width (the model option) or a comma-separated list (the width axis)
  TrainSweepOptions sweep;
  std::string json, csv, plan;
  bool quiet = false;
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
    require(is_decimal_number(item) && pos == item.size() && std::isfinite(v) && (positive ? v > 0 : v >= 0),
            option + " item '" + item + "' is not a " + (positive ? "positive" : "non-negative") +
                " number; fix: a comma-separated list such as " +
                (option == "--lr" ? "1e-4,1e-3" : positive ? "16,32" : "0,100"));
    if (std::is_integral<T>::value)
      require(v == static_cast<double>(static_cast<long>(v)), option + " item '" + item + "' is not an integer; fix: e.g. 0,100");
    out.push_back(static_cast<T>(v));
  }
  return out;
}

SpecOutcome run_train_sweep(const CLI::App& sub, TrainSweepCommand o, const SpecRun& how) {
  const bool threads_given = apply_run(o, o.sweep.resume_dir, o.sweep.threads, sub, how);
  o.sweep.placements = split_list(o.placements, "--placements");
  o.flags.model.run_placements = o.sweep.placements;  // a placement's own option must apply to one of them
  o.sweep.layers = parse_list<Index>(o.layers, "--layers", true);
  o.sweep.warmups = parse_list<long>(o.warmup, "--warmup", false);
  o.sweep.lrs = parse_list<double>(o.lr, "--lr", true);
  o.sweep.progress = !o.quiet;
  if (!o.widths.empty()) {  // one width is the model's --d-model; two or more, the width axis
    const std::vector<std::string> items = split_list(o.widths, "--d-model");
    if (items.size() == 1)
      set_model_option(o.flags.model, "d-model", items[0]);
    else
      o.sweep.widths = parse_list<Index>(o.widths, "--d-model", true);
  }
  const auto runs = plan_train_runs(o.sweep, [&](const std::string& p, Index L, Index d) {
    if (d == 0) return resolve_train(o.flags, p, L);
    TrainFlags f = o.flags;
    set_model_option(f.model, "d-model", std::to_string(d));
    return resolve_train(f, p, L);
  });
  check_outputs({{"--json", o.json}, {"--csv", o.csv}}, {{"the spec", how.spec_file}});
  const Json spec{{"gradflow_spec", kSpecVersion}, {"command", "train-sweep"}, {"options", given_options(sub)}};
  o.sweep.plan = plan_step(how, o.plan, spec,
                           {{"--json", !o.json.empty()}, {"--csv", !o.csv.empty()},
                            {"--resume", !o.sweep.resume_dir.empty()}, {"--threads", threads_given}});
  note(how, interrupt_note(o.sweep.plan, o.sweep.resume_dir, "run"));
  RunnerStats stats;
  auto reports = run_train_runs(runs, o.sweep, &stats);
  SpecOutcome out;
  out.writers = kTrainSweepWriters;
  out.files = {o.json, o.csv, !o.quiet};
  if (o.sweep.plan.kind == PlanStep::Kind::Write || o.sweep.plan.kind == PlanStep::Kind::Task) return out;
  std::vector<TrainRun> present = runs;  // a partial merge: the runs that have a result
  if (!stats.partial.is_null()) {
    present.clear();
    std::vector<Json> kept;
    for (size_t i = 0; i < runs.size(); ++i)
      if (!reports[i].is_null()) present.push_back(runs[i]), kept.push_back(std::move(reports[i]));
    reports = std::move(kept);
  }
  out.report = train_sweep_report(o.sweep, present, reports);
  if (!stats.partial.is_null()) out.report["partial"] = stats.partial;
  out.report["blas_kernel"] = kernels_json(stats.kernels);
  if (!how.spec_file.empty()) {  // `gradflow run SPEC`: the report records its spec (so `run report.json` reruns it)
    out.report["spec"] = load_spec(how.spec_file);
    out.report["spec_file"] = how.spec_file;
  }
  return out;
}

ExperimentRun add_train_sweep(CLI::App& sub) {
  auto opts = std::make_shared<TrainSweepCommand>();
  sub.add_option("--placements,--placement", opts->placements, "comma-separated placements")->capture_default_str();
  sub.add_option("--layers", opts->layers, "comma-separated depths")->capture_default_str();
  sub.add_option("--warmup", opts->warmup, "comma-separated warmup lengths")->capture_default_str();
  sub.add_option("--lr", opts->lr, "comma-separated peak learning rates")->capture_default_str();
  sub.add_option("--seeds", opts->sweep.seeds, "repetitions per cell (seed = --seed + r)")->capture_default_str();
  sub.add_option("--converge-margin", opts->sweep.converge_margin, "converged: final eval loss <= floor + MARGIN")
      ->capture_default_str();
  sub.add_option("--threads", opts->sweep.threads,
                 "threads, shared among the runs that run at once (0: every core; results do not depend on it)")
      ->check(CLI::Range(0, kMaxThreads))
      ->capture_default_str();
  sub.add_option("--resume", opts->sweep.resume_dir, "keep each finished run in DIR and reuse it when restarted")
      ->check(non_empty_path());
  add_train_flags(sub, opts->flags);
  // --d-model: a list here (the width axis: learning-rate transfer over width in one report)
  sub.remove_option(sub.get_option("--d-model"));
  sub.add_option("--d-model", opts->widths, "width d, or comma-separated widths (a width axis: each width its own "
                                            "groups; --d-ff default 4d follows each)")
      ->type_name("D[,D...]");
  sub.add_option("--json", opts->json, "write the sweep report to this file")->check(non_empty_path());
  sub.add_option("--csv", opts->csv, "write one row per run")->check(non_empty_path());
  sub.add_flag("-q,--quiet", opts->quiet, "no progress, no table");
  add_plan_option(sub, opts->plan);
  const CLI::App* parsed = &sub;
  return [parsed, opts](const SpecRun& how) { return run_train_sweep(*parsed, *opts, how); };
}

}  // namespace

ExperimentRun add_experiment_command(CLI::App& sub, const std::string& command) {
  if (command == "compare" || command == "sweep") return add_compare_sweep(sub, command);
  if (command == "train-sweep") return add_train_sweep(sub);
  throw Error("internal: no experiment command '" + command + "'", ErrorKind::Internal);
}

}  // namespace gradflow
