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
#include "gradflow/report/fields.hpp"
#include "gradflow/report/table.hpp"
#include "gradflow/run/engine.hpp"
#include "gradflow/run/hutchinson_merge.hpp"
#include "gradflow/run/run_inputs.hpp"
#include "gradflow/run/streamed_merge.hpp"
#include "gradflow/run/time_estimate.hpp"

namespace gradflow {
namespace {
using Json = nlohmann::ordered_json;

// what one task computes, in the runner's messages
const char* noun(bool probes) { return probes ? "share of the probes" : "row range"; }

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
  require((p->request.mode == "streamed" || p->request.mode == "matrix-free") && !p->request.gradients_only,
          where + ": --plan splits the exact streamed sweep or matrix-free mode's Hutchinson probes, and this is --mode " +
              p->request.mode + (p->request.gradients_only ? " --gradients-only" : "") +
              "; fix: add --mode streamed or --mode matrix-free (the other engines run on one machine: "
              "compare/sweep --plan split configurations)");
  return p;
}

// What the tasks split: the streamed sweep's chunks of identity rows (streamed.hpp: N_out = n·d rows for P_l; with
// blocks the state's n·width, ResiDual's 2n·d, when larger), or matrix-free mode's chunks of Hutchinson probes
// (hutchinson.hpp) plus one task for the Lanczos values; the chunks cut into `tasks` contiguous ranges of whole
// chunks, as even as they go. The run itself checks the same count when a task runs (a range outside it is an
// internal error), and the merge the shape each task reports.
struct Split {
  bool probes = false;                            // matrix-free: chunks of probes (else of identity rows)
  Index per_chunk = 0, total = 0, chunks = 0;     // rows or probes per chunk, in all, chunks
  bool lanczos_task = false;                      // matrix-free with spectral layers: task 0 computes them alone
  std::vector<RunPart> parts;                     // per task
  std::string name(size_t t) const {
    const RunPart& p = parts[t];
    if (p.chunk_begin == p.chunk_end) return "lanczos";
    return std::string(probes ? "probes_" : "rows_") + std::to_string(p.chunk_begin * per_chunk) + "-" +
           std::to_string(std::min(p.chunk_end * per_chunk, total) - 1);
  }
};

Split split_run(const Model& model, Index n, const AnalysisOptions& a, const std::string& mode, int tasks,
                const std::string& where) {
  Split s;
  s.probes = mode == "matrix-free";
  std::string unit;
  if (s.probes) {
    require(a.hutchinson_probes > 0, where + ": --plan with --mode matrix-free splits the Hutchinson probes, and "
                                             "--hutchinson-probes is 0; fix: e.g. --hutchinson-probes 1024 (the "
                                             "Lanczos values alone run on one machine: drop --plan)");
    require(a.probe_chunk >= 1, where + ": --probe-chunk " + std::to_string(a.probe_chunk) +
                                    " must be at least 1; fix: e.g. --probe-chunk 64");
    s.total = a.hutchinson_probes;
    s.per_chunk = std::min(a.probe_chunk, a.hutchinson_probes);  // hutchinson.hpp's ProbeChunking
    s.lanczos_task = !parse_spectral_layers(a.spectral_layers, model.layers()).empty();
    unit = " probes (--hutchinson-probes " + std::to_string(s.total) + "); fix: --tasks ";
  } else {
    const Index out_rows = n * model.d_model(), state_rows = n * model.state_width();
    s.total = a.stream_blocks ? std::max(out_rows, state_rows) : out_rows;
    require(a.stream_rows >= 1, where + ": --stream-rows " + std::to_string(a.stream_rows) +
                                    " must be at least 1; fix: e.g. --stream-rows 256");
    s.per_chunk = std::min(a.stream_rows, s.total);
    unit = " identity rows (" + std::to_string(s.total) + " rows); fix: --tasks ";
  }
  s.chunks = (s.total + s.per_chunk - 1) / s.per_chunk;
  const Index T = tasks > 0 ? tasks : std::min<Index>(kDefaultStreamedTasks, s.chunks);
  const char* option = s.probes ? " of --probe-chunk " : " of --stream-rows ";
  require(T <= s.chunks, where + ": --tasks " + std::to_string(T) + " exceeds the " + std::to_string(s.chunks) +
                             " chunks" + option + std::to_string(s.per_chunk) + unit + std::to_string(s.chunks) +
                             " or fewer, or a smaller" + option + "(chunks are never split)");
  if (s.lanczos_task) s.parts.push_back(RunPart{0, 0, true});
  for (Index t = 0; t < T; ++t) s.parts.push_back(RunPart{t * s.chunks / T, (t + 1) * s.chunks / T, !s.probes});
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

std::unique_ptr<PlanJobs> plan_jobs(const Json& spec, const std::string& where) {
  auto p = std::make_unique<PlanJobs>();
  p->parsed = parse_spec(spec, where);
  p->parsed->request.quiet = true;  // a task's run: no progress, no notes (the runner reports each task)
  p->rc = resolve(p->parsed->request.model);
  const Model model(p->rc.model);
  p->split = split_run(model, p->rc.analysis.seq_len, p->rc.analysis, p->parsed->request.mode, p->parsed->plan.tasks,
                       where);
  // a result is merged only when computed for these: the options as given, the inputs by content (the config of
  // expected_config: weights_sha256, ...), the chunking, and the gradflow that wrote the plan
  const Json head = plan_manifest_head();
  p->configuration = Json{{"options", spec.value("options", Json::object())}, {"config", expected_config(p->rc)}};
  if (p->split.probes) {
    p->configuration["probe_chunk"] = p->split.per_chunk;
    p->configuration["hutchinson_probes"] = p->split.total;
  } else {
    p->configuration["stream_rows"] = p->split.per_chunk;
    p->configuration["stream_blocks"] = p->rc.analysis.stream_blocks;
  }
  p->configuration["chunks_total"] = p->split.chunks;
  p->configuration["gradflow_version"] = head["gradflow_version"];
  p->configuration["git_commit"] = head["git_commit"];
  PlanJobs* self = p.get();
  for (size_t t = 0; t < p->split.parts.size(); ++t) {
    const RunPart part = p->split.parts[t];
    p->jobs.push_back(ResumableJob{
        p->split.name(t),
        [self, part] {
          Json c = self->configuration;
          c["chunks"] = Json::array({part.chunk_begin, part.chunk_end});
          if (self->split.probes) c["lanczos"] = part.lanczos;
          return c;
        },
        [self, part] {
          return run_analyze_request(self->parsed->request, [part](RunConfig& rc) { rc.analysis.part = part; });
        }});
  }
  return p;
}

// The report without what legitimately differs between tasks: each task's share, where and how long it ran (and in
// a matrix-free plan the Jacobians' fields, which hold the Lanczos task's values or a probe task's nulls).
Json shared_part(Json report, bool probes) {
  for (const char* key : {"streamed_partial", "hutchinson_partial", "config", "blas_kernel", "elapsed_seconds",
                          "timing_seconds"})
    report.erase(key);
  if (probes) {
    if (report.contains(fields::kLayers) && report[fields::kLayers].is_array())
      for (Json& layer : report[fields::kLayers])
        if (layer.is_object()) {
          layer.erase(fields::kBlockJacobian);
          layer.erase(fields::kProductJacobian);
        }
    if (report.contains(fields::kSummary) && report[fields::kSummary].is_object())
      for (const char* key : {fields::kPerLayerRmsGainProduct, fields::kBottomProductRmsGain, "rms_gain_method"})
        report[fields::kSummary].erase(key);
  }
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
  const std::vector<Json> reports = run_resumable(p.jobs, opts, noun(p.split.probes), nullptr, &stats);
  const Split& split = p.split;
  const Json* base = nullptr;
  size_t base_task = 0;
  std::vector<Json> partials;
  for (size_t t = 0; t < reports.size(); ++t) {
    if (reports[t].is_null()) continue;  // missing (--allow-partial)
    const RunPart& part = split.parts[t];
    const std::string bad = split.probes
                                ? hutchinson_partial_problem(reports[t], part.chunk_begin, part.chunk_end)
                                : streamed_partial_problem(reports[t], part.chunk_begin, part.chunk_end);
    require(bad.empty(), "task " + std::to_string(t) + " (" + p.jobs[t].name + ") of " + how.plan.dir + ": its result " +
                             "cannot be merged: " + bad + "; fix: rerun it (" + task_command(how.plan.dir, static_cast<int>(t)) +
                             " after deleting its result)");
    if (!base) {
      base = &reports[t];
      base_task = t;
    } else {
      require(shared_part(reports[t], split.probes) == shared_part(*base, split.probes),
              "task " + std::to_string(t) + " (" + p.jobs[t].name + ") and task " + std::to_string(base_task) + " (" +
                  p.jobs[base_task].name + ") of " + how.plan.dir + " computed different gradients and norms outside "
                  "their shares (other inputs, or other kernels); fix: rerun both on one kind of machine "
                  "(delete their results, then " + task_command(how.plan.dir, static_cast<int>(t)) + ")");
    }
    partials.push_back(reports[t][split.probes ? "hutchinson_partial" : "streamed_partial"]);
  }
  // the report the norms go into: the first task's (a matrix-free plan's is the Lanczos task, when it has one and it
  // ran; without it the singular values stay null, --allow-partial)
  Json report = *base;  // run_resumable refuses a merge without any result
  if (split.probes)
    merge_hutchinson_partials(report, partials);
  else
    merge_streamed_partials(report, partials);
  report["elapsed_seconds"] = summed_times(reports, "elapsed_seconds");
  report["timing_seconds"] = summed_times(reports, "timing_seconds");
  report["blas_kernel"] = kernels_json(stats.kernels);
  if (!stats.partial.is_null()) {
    report["partial"] = stats.partial;
    if (split.probes)
      report["partial"]["probes_covered"] = report["summary"]["hutchinson_probes_covered"];
    else
      report["partial"]["rows_covered"] = report["summary"]["streamed_rows_covered"];
  }
  return report;
}

}  // namespace

const ReportWriters kAnalyzeWriters{print_table, nullptr};

void add_analyze_plan_options(CLI::App& sub, AnalyzePlanOptions& o) {
  sub.add_option("--plan", o.dir, "with --mode streamed or matrix-free: write the run as a plan of tasks into DIR "
                                  "instead of running it (gradflow task, slurm, merge; docs/cluster.md)")
      ->type_name("DIR");
  sub.add_option("--tasks", o.tasks, "with --plan: the tasks the sweep's identity rows (whole chunks of --stream-rows) "
                                     "or the Hutchinson probes (whole chunks of --probe-chunk; the Lanczos values: "
                                     "one more task) are split into; default " + std::to_string(kDefaultStreamedTasks) +
                                     ", at most one per chunk")
      ->check(CLI::Range(1, 1000000));
}

void write_analyze_plan(const CLI::App& sub, const AnalyzeRequest& r, const AnalyzePlanOptions& plan) {
  const Json spec{{"gradflow_spec", kSpecVersion}, {"command", "analyze"}, {"options", given_options(sub)}};
  const std::unique_ptr<PlanJobs> p = plan_jobs(spec, "analyze --plan");
  {  // a task that would not fit --max-memory is refused here, before the plan is written (and again in each task)
    AnalysisOptions a = p->rc.analysis;
    a.engine_request = p->split.probes ? EngineRequest::MatrixFree : EngineRequest::Streamed;
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
  // what `gradflow slurm` prints before submitting: the whole run's cost at this machine's DGEMM rate
  const AnalysisOptions& a = p->rc.analysis;
  const StreamedCost cost =
      p->split.probes
          ? matrix_free_cost_here(p->rc.model, a.seq_len, a.hutchinson_probes,
                                  parse_spectral_layers(a.spectral_layers, p->rc.model.layers))
          : streamed_cost_here(p->rc.model, a.seq_len, a.stream_blocks);
  opts.plan.manifest["estimate"] = Json{{"flops", cost.flops},
                                        {"dgemm_flops_per_second", cost.dgemm_rate},
                                        {"threads", cost.threads},
                                        {"seconds", cost.seconds},
                                        {"core_hours", cost.core_hours()},
                                        {"note", std::string(p->split.probes ? "matrix_free_flops" : "streamed_seconds_estimate") +
                                                     " at the DGEMM rate of the machine that wrote the plan "
                                                     "(docs/scaling.md)"}};
  run_resumable(p->jobs, opts, noun(p->split.probes), nullptr);
  if (!r.quiet)
    std::fprintf(stderr, "gradflow: %lld %s in %lld chunks of %lld over %zu tasks%s; estimated %.3g core-hours in all "
                         "at this machine's DGEMM rate (%.3g GFLOP/s on %d threads)\n",
                 static_cast<long long>(p->split.total), p->split.probes ? "Hutchinson probes" : "identity rows",
                 static_cast<long long>(p->split.chunks), static_cast<long long>(p->split.per_chunk),
                 p->split.parts.size() - (p->split.lanczos_task ? 1 : 0),
                 p->split.lanczos_task ? " and task 0 for the Lanczos values" : "",
                 cost.core_hours(), cost.dgemm_rate / 1e9, cost.threads);
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
    run_resumable(p->jobs, opts, noun(p->split.probes), nullptr);
    return out;
  }
  if (how.plan.kind != PlanStep::Kind::Merge)
    throw Error("internal: an analyze plan step that is neither a task nor a merge", ErrorKind::Internal);
  check_outputs({{"--json", how.json}}, run_input_paths(p->rc));  // before any work: never over an input
  out.report = merge(*p, how);
  return out;
}

}  // namespace gradflow
