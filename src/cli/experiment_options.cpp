// experiment_options.cpp — see experiment_options.hpp.
#include "process/interrupt.hpp"
#include "process/runtime_env.hpp"
#include "cli/experiment_options.hpp"
#include "cli/analysis_options.hpp"
#include "cli/commands.hpp"

#include <iostream>

#include "gradflow/core/error.hpp"
#include "gradflow/experiments/experiment.hpp"
#include "gradflow/experiments/run_experiment.hpp"
#include "gradflow/experiments/spec.hpp"
#include "gradflow/report/atomic_file.hpp"
#include "gradflow/run/run_inputs.hpp"

namespace gradflow::cli {
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
    if (name == "spec-file" || name == "json" || name == "csv" || name == "resume") continue;
    if (name == "threads" || name == "quiet") continue;  // how it ran, not what: the report is the same for every
                                                         // --threads (docs/experiments.md) and with or without -q
    if (name.rfind("plan", 0) == 0) continue;            // --plan and the steps of a plan: where and how it runs
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
  sub.add_option("--seeds", o.seeds, "repetitions per configuration; repetition r uses seed = --seed + r")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  sub.add_option("--json", o.json, "write the experiment report (mean/std over seeds, ratios, fits, spec) here")->check(non_empty_path());
  sub.add_option("--csv", o.csv, "write the long-format CSV (placement,depth,[param,value,]layer,metric,mean,std,n)")->check(non_empty_path());
  sub.add_option("--resume", o.resume,
                 "keep each finished configuration in DIR (written atomically); a rerun skips those already there")
      ->check(non_empty_path());
  sub.add_option("--threads", o.threads,
                 "threads, shared among the configurations that run at once (default: all cores; one configuration "
                 "alone gets them all; results do not depend on it)")
      ->check(CLI::Range(0, process::kMaxThreads));
  sub.add_flag("--gradients-only", o.gradients_only, "skip the explicit Jacobians (gradient norms only, ~100x faster)");
  sub.add_option("--device", o.device, "where each configuration's explicit products (or streamed/matrix-free "
                                       "chain) run: cpu | cuda (one configuration at a time; docs/cuda.md)")
      ->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  add_sensitivity_options(sub, o.model.rc.analysis);
  sub.add_flag("-q,--quiet", o.quiet, "no table, no progress");
  sub.add_option("--spec-file", o.spec_file, "(set by `gradflow run`) the spec file this run comes from")
      ->group("");
  add_plan_options(sub, o.plan);
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

void run_experiment_command(const CLI::App& sub, const std::string& kind, const PlanAxes& axes,
                            const ExperimentOptions& o) {
  const RunConfig& rc = o.model.rc;
  check_sensitivity_options(sub, rc.analysis);
  const BackendKind device = parse_backend_kind(o.device);
  require(!(o.gradients_only && device != BackendKind::Cpu),
          "--device " + o.device + " runs the Jacobian products, which --gradients-only skips (its gradients run on "
          "the CPU); fix: drop --device or --gradients-only");
  std::vector<NamedPath> inputs = run_input_paths(rc);
  inputs.push_back({"the spec", o.spec_file});
  check_outputs({{"--json", o.json}, {"--csv", o.csv}}, inputs);
  ExperimentSettings e;
  e.kind = kind;
  e.model = o.model;
  e.axes = axes;
  e.axes.seeds = o.seeds;
  e.axes.base_seed = o.model.rc.init.seed;
  e.gradients_only = o.gradients_only;
  e.backend = device;
  e.runner.threads = o.threads;
  e.runner.resume_dir = o.resume;
  e.runner.progress = !o.quiet;
  e.spec = Json{{"gradflow_spec", kSpecVersion}, {"command", kind}, {"options", given_options(sub)}};
  e.spec_file = o.spec_file;
  e.runner.plan = plan_step(o.plan, e.spec, o.spec_file,
                            {{"--json", !o.json.empty()}, {"--csv", !o.csv.empty()}, {"--resume", !o.resume.empty()},
                             {"--threads", sub.count("--threads") > 0}});
  process::set_interrupt_note(
      e.runner.plan.kind == PlanStep::Kind::Task
          ? "finished tasks are kept in " + plan_results_dir(o.plan.dir) + "; rerun the same gradflow task to "
            "continue from them"
      : o.resume.empty() ? "no configuration was kept; fix: rerun with --resume DIR, which keeps each finished one "
                           "and continues from them when run again"
                         : "finished configurations are kept in " + o.resume + "; rerun the same command to continue "
                           "from them");
  const Json report = run_experiment(std::move(e));
  if (report.is_null()) return;  // a plan written, or tasks of one run
  write_report(report, kExperimentWriters, {o.json, o.csv, !o.quiet}, std::cout);
}

}  // namespace gradflow::cli
