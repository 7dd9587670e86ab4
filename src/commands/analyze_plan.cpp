// analyze_plan.cpp — see analyze_plan.hpp.
#include "gradflow/commands/analyze_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "gradflow/core/error.hpp"
#include "gradflow/experiments/experiment_options.hpp"
#include "gradflow/experiments/runner.hpp"
#include "gradflow/experiments/spec.hpp"
#include "gradflow/model/model.hpp"
#include "gradflow/report/atomic_file.hpp"
#include "gradflow/report/table.hpp"
#include "gradflow/run/engine.hpp"
#include "gradflow/run/run_inputs.hpp"
#include "gradflow/run/streamed_merge.hpp"
#include "gradflow/run/time_estimate.hpp"

namespace gradflow {
namespace {
using Json = nlohmann::ordered_json;

constexpr const char* kNoun = "row range";  // what one task computes, in the runner's messages

void print_table(std::ostream& os, const Json& report) { print_report_table(os, report, false); }

// An analyze plan's spec parsed by analyze's own options (parse_spec_options, as run_spec parses an experiment's).
struct ParsedSpec {
  CLI::App app;
  AnalyzeRequest request;
  AnalyzePlanOptions plan;
};

std::unique_ptr<ParsedSpec> parse_spec(const Json& spec, const std::string& where) {
  auto p = std::make_unique<ParsedSpec>();
  p->app.require_subcommand(1);
  CLI::App* sub = p->app.add_subcommand("analyze");
  add_analyze_options(*sub, p->request);
  add_analyze_plan_options(*sub, p->plan);
  parse_spec_options(p->app, spec, where);
  note_given_analyze_options(*sub, p->request);
  require(p->request.mode == "streamed" && !p->request.gradients_only,
          where + ": --plan splits the exact streamed sweep only, and this is --mode " + p->request.mode +
              (p->request.gradients_only ? " --gradients-only" : "") +
              "; fix: add --mode streamed (the other engines run on one machine: compare/sweep --plan split "
              "configurations)");
  return p;
}

// The sweep's chunks (streamed.hpp: N_out = n·d rows for P_l; with blocks the state's n·width, ResiDual's 2n·d, when
// larger), cut into `tasks` contiguous ranges of whole chunks, as even as they go. The sweep itself checks the same
// count when a task runs (a range outside it is an internal error), and the merge the shape each task reports.
struct Split {
  Index rows_per_chunk = 0, total_rows = 0, chunks = 0;
  std::vector<std::pair<Index, Index>> ranges;  // [first chunk, end chunk) per task
};

Split split_sweep(const Model& model, Index n, const AnalysisOptions& a, int tasks, const std::string& where) {
  Split s;
  const Index out_rows = n * model.d_model(), state_rows = n * model.state_width();
  s.total_rows = a.stream_blocks ? std::max(out_rows, state_rows) : out_rows;
  s.rows_per_chunk = std::min(a.stream_rows, s.total_rows);
  s.chunks = (s.total_rows + s.rows_per_chunk - 1) / s.rows_per_chunk;
  const Index T = tasks > 0 ? tasks : std::min<Index>(kDefaultStreamedTasks, s.chunks);
  require(T <= s.chunks, where + ": --tasks " + std::to_string(T) + " exceeds the sweep's " + std::to_string(s.chunks) +
                             " chunks of --stream-rows " + std::to_string(s.rows_per_chunk) + " identity rows (" +
                             std::to_string(s.total_rows) + " rows); fix: --tasks " + std::to_string(s.chunks) +
                             " or fewer, or a smaller --stream-rows");
  for (Index t = 0; t < T; ++t) s.ranges.emplace_back(t * s.chunks / T, (t + 1) * s.chunks / T);
  return s;
}

// Everything the plan's tasks are made of; the jobs refer to it, so it outlives them.
struct PlanJobs {
  std::unique_ptr<ParsedSpec> parsed;
  RunConfig rc;
  Split split;
  Json configuration;  // what every task shares: the options, the inputs by content, the gradflow
  std::vector<ResumableJob> jobs;
};

std::string range_name(const Split& s, size_t t) {
  const auto [b, e] = s.ranges[t];
  return "rows_" + std::to_string(b * s.rows_per_chunk) + "-" + std::to_string(std::min(e * s.rows_per_chunk, s.total_rows) - 1);
}

std::unique_ptr<PlanJobs> plan_jobs(const Json& spec, const std::string& where) {
  auto p = std::make_unique<PlanJobs>();
  p->parsed = parse_spec(spec, where);
  p->parsed->request.quiet = true;  // a task's run: no progress, no notes (the runner reports each task)
  p->rc = resolve(p->parsed->request.model);
  const Model model(p->rc.model);
  p->split = split_sweep(model, p->rc.analysis.seq_len, p->rc.analysis, p->parsed->plan.tasks, where);
  // a result is merged only when computed for these: the options as given, the inputs by content (the config of
  // expected_config: weights_sha256, ...), the chunking, and the gradflow that wrote the plan
  const Json head = plan_manifest_head();
  p->configuration = Json{{"options", spec.value("options", Json::object())},
                          {"config", expected_config(p->rc)},
                          {"stream_rows", p->split.rows_per_chunk},
                          {"stream_blocks", p->rc.analysis.stream_blocks},
                          {"chunks_total", p->split.chunks},
                          {"gradflow_version", head["gradflow_version"]},
                          {"git_commit", head["git_commit"]}};
  PlanJobs* self = p.get();
  for (size_t t = 0; t < p->split.ranges.size(); ++t) {
    const auto [b, e] = p->split.ranges[t];
    p->jobs.push_back(ResumableJob{
        range_name(p->split, t),
        [self, b = b, e = e] {
          Json c = self->configuration;
          c["chunks"] = Json::array({b, e});
          return c;
        },
        [self, b = b, e = e] {
          return run_analyze_request(self->parsed->request, [b, e](RunConfig& rc) { rc.analysis.part = RunPart{b, e}; });
        }});
  }
  return p;
}

// The report without what legitimately differs between tasks: each task's share, where and how long it ran.
Json shared_part(Json report) {
  for (const char* key : {"streamed_partial", "config", "blas_kernel", "elapsed_seconds", "timing_seconds"})
    report.erase(key);
  return report;
}

// Σ over tasks of each number in `key` (elapsed_seconds, timing_seconds's parts): the split run's compute time.
Json summed_times(const std::vector<Json>& reports, const char* key) {
  Json total;
  for (const Json& r : reports) {
    if (r.is_null() || !r.contains(key)) continue;
    const Json& v = r[key];
    if (v.is_number()) {
      total = (total.is_number() ? total.get<double>() : 0.0) + v.get<double>();
    } else if (v.is_object()) {
      if (!total.is_object()) total = Json::object();
      for (const auto& [k, x] : v.items())
        if (x.is_number()) total[k] = total.value(k, 0.0) + x.get<double>();
    }
  }
  return total;
}

Json merge(const PlanJobs& p, const SpecRun& how) {
  RunnerOptions opts;
  opts.plan = how.plan;
  opts.progress = !how.quiet;
  RunnerStats stats;
  const std::vector<Json> reports = run_resumable(p.jobs, opts, kNoun, nullptr, &stats);
  const Json* base = nullptr;
  size_t base_task = 0;
  std::vector<Json> partials;
  for (size_t t = 0; t < reports.size(); ++t) {
    if (reports[t].is_null()) continue;  // missing (--allow-partial)
    const auto [b, e] = p.split.ranges[t];
    const std::string bad = streamed_partial_problem(reports[t], b, e);
    require(bad.empty(), "task " + std::to_string(t) + " (" + p.jobs[t].name + ") of " + how.plan.dir + ": its result " +
                             "cannot be merged: " + bad + "; fix: rerun it (" + task_command(how.plan.dir, static_cast<int>(t)) +
                             " after deleting its result)");
    if (!base) {
      base = &reports[t];
      base_task = t;
    } else {
      require(shared_part(reports[t]) == shared_part(*base),
              "task " + std::to_string(t) + " (" + p.jobs[t].name + ") and task " + std::to_string(base_task) + " (" +
                  p.jobs[base_task].name + ") of " + how.plan.dir + " computed different gradients and norms outside "
                  "their streamed shares (other inputs, or other kernels); fix: rerun both on one kind of machine "
                  "(delete their results, then " + task_command(how.plan.dir, static_cast<int>(t)) + ")");
    }
    partials.push_back(reports[t]["streamed_partial"]);
  }
  Json report = *base;  // run_resumable refuses a merge without any result
  merge_streamed_partials(report, partials);
  report["elapsed_seconds"] = summed_times(reports, "elapsed_seconds");
  report["timing_seconds"] = summed_times(reports, "timing_seconds");
  report["blas_kernel"] = kernels_json(stats.kernels);
  if (!stats.partial.is_null()) {
    report["partial"] = stats.partial;
    report["partial"]["rows_covered"] = report["summary"]["streamed_rows_covered"];
  }
  return report;
}

}  // namespace

const ReportWriters kAnalyzeWriters{print_table, nullptr};

void add_analyze_plan_options(CLI::App& sub, AnalyzePlanOptions& o) {
  sub.add_option("--plan", o.dir, "with --mode streamed: write the sweep as a plan of tasks into DIR instead of running "
                                  "it (gradflow task, slurm, merge; docs/cluster.md)")
      ->type_name("DIR");
  sub.add_option("--tasks", o.tasks, "with --plan: the tasks the sweep's identity rows are split into (whole chunks of "
                                     "--stream-rows; default " + std::to_string(kDefaultStreamedTasks) +
                                     ", at most one per chunk)")
      ->check(CLI::Range(1, 1000000));
}

void write_analyze_plan(const CLI::App& sub, const AnalyzeRequest& r, const AnalyzePlanOptions& plan) {
  const Json spec{{"gradflow_spec", kSpecVersion}, {"command", "analyze"}, {"options", given_options(sub)}};
  const std::unique_ptr<PlanJobs> p = plan_jobs(spec, "analyze --plan");
  {  // a task that would not fit --max-memory is refused here, before the plan is written (and again in each task)
    AnalysisOptions a = p->rc.analysis;
    a.engine_request = EngineRequest::Streamed;
    a.backend = parse_backend_kind(r.device);
    const RunBackend backend(a.backend);  // built only when asked: the streamed check asks no device
    choose_engine(p->rc.model, a, backend);
  }
  RunnerOptions opts;
  opts.progress = !r.quiet;
  opts.plan.kind = PlanStep::Kind::Write;
  opts.plan.dir = plan.dir;
  opts.plan.manifest = plan_manifest_head();
  opts.plan.manifest["command"] = "analyze";
  opts.plan.manifest["spec"] = spec;
  // what `gradflow slurm` prints before submitting: the whole sweep's cost at this machine's DGEMM rate
  const StreamedCost cost = streamed_cost_here(p->rc.model, p->rc.analysis.seq_len, p->rc.analysis.stream_blocks);
  opts.plan.manifest["estimate"] = Json{{"flops", cost.flops},
                                        {"dgemm_flops_per_second", cost.dgemm_rate},
                                        {"threads", cost.threads},
                                        {"seconds", cost.seconds},
                                        {"core_hours", cost.core_hours()},
                                        {"note", "streamed_seconds_estimate at the DGEMM rate of the machine that wrote "
                                                 "the plan (docs/scaling.md)"}};
  run_resumable(p->jobs, opts, kNoun, nullptr);
  if (!r.quiet)
    std::fprintf(stderr, "gradflow: %lld identity rows in %lld chunks of %lld over %zu tasks; estimated %.3g "
                         "core-hours in all at this machine's DGEMM rate (%.3g GFLOP/s on %d threads)\n",
                 static_cast<long long>(p->split.total_rows), static_cast<long long>(p->split.chunks),
                 static_cast<long long>(p->split.rows_per_chunk), p->split.ranges.size(), cost.core_hours(),
                 cost.dgemm_rate / 1e9, cost.threads);
}

SpecOutcome run_analyze_plan_step(const Json& manifest, const SpecRun& how) {
  const std::string where = "plan '" + how.plan.dir + "'";
  require(how.csv.empty(), "--csv: the report of an analyze plan has no CSV (it is analyze's report); fix: drop --csv "
                           "and use --json");
  const std::unique_ptr<PlanJobs> p = plan_jobs(manifest["spec"], where);
  SpecOutcome out;
  out.writers = kAnalyzeWriters;
  out.files = {how.json, "", !how.quiet};
  if (how.plan.kind == PlanStep::Kind::Task) {
    RunnerOptions opts;
    opts.plan = how.plan;
    opts.threads = how.threads < 0 ? 0 : how.threads;
    opts.progress = !how.quiet;
    if (how.interrupt_note)
      how.interrupt_note("finished tasks are kept in " + plan_results_dir(how.plan.dir) + "; rerun the same gradflow "
                         "task to continue from them");
    run_resumable(p->jobs, opts, kNoun, nullptr);
    return out;
  }
  if (how.plan.kind != PlanStep::Kind::Merge)
    throw Error("internal: an analyze plan step that is neither a task nor a merge", ErrorKind::Internal);
  check_outputs({{"--json", how.json}}, run_input_paths(p->rc));  // before any work: never over an input
  out.report = merge(*p, how);
  return out;
}

}  // namespace gradflow
