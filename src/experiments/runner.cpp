// runner.cpp — see runner.hpp. Parallel over configurations with `omp parallel for schedule(dynamic, 1)`;
// each worker sets its own OpenMP team size to its share of the threads (share_threads), and the region allows one
// level of nested teams, so a job's engine loops and products (gradflow's dgemm_, src/linalg/blas_threads.cpp)
// run on its share and the jobs together on the threads asked for, no more. A job that runs alone (one job, or
// one at a time on a device: the region then has one thread and is inactive) gives its engine every thread. The
// numbers are the same either way: the engines do not depend on the thread count (docs/experiments.md,
// "Parallelism and determinism"; tests/experiments/test_runner.cpp).
#include "gradflow/experiments/runner.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "gradflow/core/cancel.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/experiments/slurm_script.hpp"
#include "gradflow/io/test_fault.hpp"
#include "gradflow/model/model.hpp"
#include "gradflow/report/atomic_file.hpp"
#include "gradflow/report/json_text.hpp"
#include "gradflow/run/run_config.hpp"
#include "linalg/blas_kernel.hpp"

namespace gradflow {
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

using Kind = PlanStep::Kind;

// The input file whose content differs between the configuration a result (or a plan) was computed with and this
// run's (run_config.cpp records each file's SHA-256), as "the --weights file had SHA-256 ab12... and now has
// cd34...", or "" when none does.
std::string input_change(const Json& then, const Json& now) {
  if (!then.is_object() || !now.is_object()) return "";
  for (const char* key : {"gradflow_version", "git_commit"})  // recorded by plans whose merge needs one gradflow
    if (then.contains(key) && now.contains(key) && then[key] != now[key])
      return "the gradflow differs (version " + then.value("gradflow_version", Json("?")).dump() + ", commit " +
             then.value("git_commit", Json()).dump() + " then; " + now.value("gradflow_version", Json("?")).dump() +
             ", commit " + now.value("git_commit", Json()).dump() + " now)";
  for (const auto& [key, option] : {std::pair<const char*, const char*>{"weights_sha256", "--weights"},
                                    {"input_sha256", "--input"}, {"cotangent_sha256", "--cotangent"}}) {
    if (!then.contains(key) || !now.contains(key) || then[key] == now[key]) continue;  // absent: other options
    const auto digits = [](const Json& h) { return h.is_string() ? h.get<std::string>().substr(0, 16) : h.dump(); };
    return "the " + std::string(option) + " file held other contents (SHA-256 " + digits(then[key]) + "... then, " +
           digits(now[key]) + "... now)";
  }
  if (then.contains("token_ids") && now.contains("token_ids") && then["token_ids"] != now["token_ids"])
    return "the --token-ids were others";
  return "";
}

// Prepares DIR: creates it, removes the temporary files a killed run may have left (NAME.json.tmp.PID) — of every
// job, or, when `only` is given (a plan's tasks, which other processes may be writing at the same time), of those
// jobs alone.
void prepare_dir(const std::string& dir, const std::vector<std::string>* only = nullptr) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  require(!ec && fs::is_directory(dir), "'" + dir + "' cannot be created: " + ec.message() +
                                            "; fix: choose a writable directory");
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    const size_t at = name.find(".json.tmp.");
    if (at == std::string::npos) continue;
    if (only && std::find(only->begin(), only->end(), name.substr(0, at)) == only->end()) continue;
    fs::remove(e.path(), ec);
  }
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The task list of a plan: {"id", "name", "configuration"} per job, in plan order.
// A job's configuration as the plan and its result files hold it (strings made valid UTF-8, report/json_text.hpp), so
// what is compared on resume, task and merge is what was written.
Json planned_configuration(const ResumableJob& job) { return utf8_safe(job.configuration()); }

Json task_list(const std::vector<ResumableJob>& jobs) {
  Json tasks = Json::array();
  for (size_t i = 0; i < jobs.size(); ++i)
    tasks.push_back(Json{{"id", i}, {"name", jobs[i].name}, {"configuration", planned_configuration(jobs[i])}});
  return tasks;
}

// --plan DIR: the manifest, unless DIR already holds this very plan (then its results are kept).
void write_plan(const std::vector<ResumableJob>& jobs, const PlanStep& step, const std::string& noun, bool progress) {
  Json manifest = utf8_safe(step.manifest);  // as the file will hold it, so that writing it again compares equal
  manifest["task_noun"] = noun;
  manifest["tasks"] = task_list(jobs);
  const std::string path = plan_manifest_path(step.dir);
  std::error_code ec;
  fs::create_directories(plan_results_dir(step.dir), ec);  // before the plan: a run that finds it writes results here
  io::test_pause("plan-create");
  // created exclusively: of two runs writing a plan into the same folder at once, one creates it and the other
  // reads it (and goes on only when it is the same plan)
  if (!create_file_exclusive(path, json_text(manifest, 1) + "\n")) {
    const Json old = read_plan_manifest(step.dir);
    require(old["tasks"] == manifest["tasks"] && old["spec"] == manifest["spec"],
            "--plan '" + step.dir + "' already holds another plan; fix: choose a new directory (or delete it)");
    if (progress)
      std::cerr << "gradflow: " << step.dir << " already holds this plan; "
                << jobs.size() - plan_missing_tasks(step.dir, old).size() << " of " << jobs.size()
                << " tasks have results\n";
    return;
  }
  prepare_dir(plan_results_dir(step.dir));  // a new plan: temporary files a killed run left there go
  if (progress)
    std::cerr << "gradflow: wrote a plan of " << jobs.size() << " tasks (one " << noun << " each) to " << path
              << "; run them with `gradflow task " << shell_word(step.dir) << " ID` or `gradflow slurm "
              << shell_word(step.dir) << "`, then `gradflow merge " << shell_word(step.dir)
              << " --json report.json` (docs/cluster.md)\n";
}

// Task and Merge: the plan in DIR must have exactly these jobs (a changed gradflow or options would mix results).
void check_plan(const std::vector<ResumableJob>& jobs, const std::string& dir) {
  const Json manifest = read_plan_manifest(dir);
  const Json tasks = task_list(jobs);
  for (size_t i = 0; i < tasks.size() && i < manifest["tasks"].size(); ++i) {
    const std::string changed = input_change(manifest["tasks"][i]["configuration"], tasks[i]["configuration"]);
    require(changed.empty(), "the plan in " + dir + " was written for other inputs: " + changed + " (task " +
                                 std::to_string(i) + ", " + jobs[i].name + "); fix: restore the file the plan was "
                                 "written for, or write a new plan for this one");
  }
  if (manifest["tasks"] == tasks) return;
  size_t first = 0;  // the first task that differs (or the first beyond the shorter list)
  while (first < tasks.size() && first < manifest["tasks"].size() && manifest["tasks"][first] == tasks[first]) ++first;
  const std::string which = first < tasks.size() || first < manifest["tasks"].size()
                                ? " (from task " + std::to_string(first) + " on; the plan has " +
                                      std::to_string(manifest["tasks"].size()) + " tasks, the run " +
                                      std::to_string(tasks.size()) + ")"
                                : "";
  const Json head = plan_manifest_head();
  if (manifest.value("gradflow_version", Json()) == head["gradflow_version"] &&
      manifest.value("git_commit", Json()) == head["git_commit"])  // this very gradflow wrote it: it was edited since
    throw Error("the tasks of " + plan_manifest_path(dir) + " differ from this run's" + which + ", and this very "
                "gradflow wrote the plan: its spec or tasks were edited since (or this is another run); fix: write "
                "the plan again (the same command with --plan NEW_DIR)");
  throw Error("the tasks of " + plan_manifest_path(dir) + " differ from those this gradflow (" + GRADFLOW_VERSION +
              ") makes of its spec" + which + "; fix: run the plan with the gradflow that wrote it (version " +
              manifest.value("gradflow_version", std::string("?")) + ", commit " +
              manifest.value("git_commit", Json("unknown")).dump() + "), or write a new plan");
}

// `fix` with "%CORE%" replaced by the setting that makes OpenBLAS choose `kernel`'s kernel set
// ("OPENBLAS_CORETYPE=Haswell" for "OpenBLAS 0.3.21 Haswell").
std::string with_coretype(std::string fix, const std::string& kernel) {
  const size_t space = kernel.rfind(' '), at = fix.find("%CORE%");
  const bool openblas = kernel.rfind("OpenBLAS ", 0) == 0 && space != std::string::npos;
  if (at != std::string::npos)
    fix.replace(at, 6, openblas ? "OPENBLAS_CORETYPE=" + kernel.substr(space + 1) : "the same BLAS");
  return fix;
}

// The kernels of the jobs' results (`kernels`: one per job, "" where unknown), each once, in job order; an Error when
// there are two and `allow` is false ("" counts for none: files written before gradflow recorded kernels). `fix` ends
// the message; "%CORE%" in it becomes the first result's OpenBLAS kernel set.
std::vector<std::string> distinct_kernels(const std::vector<ResumableJob>& jobs, const std::vector<std::string>& kernels,
                                          bool allow, std::string fix) {
  std::vector<std::string> out;
  std::vector<size_t> first;
  for (size_t i = 0; i < jobs.size() && i < kernels.size(); ++i)
    if (!kernels[i].empty() && std::find(out.begin(), out.end(), kernels[i]) == out.end())
      out.push_back(kernels[i]), first.push_back(i);
  if (out.size() > 1 && !allow) {
    fix = with_coretype(fix, out[0]);
    throw Error("the results were computed on different BLAS kernels, '" + out[0] + "' (" + jobs[first[0]].name +
                ") and '" + out[1] + "' (" + jobs[first[1]].name + "), which differ in the last bits; fix: " + fix);
  }
  return out;
}

// Task: a result of the task's own ID that cannot be used (corrupt, edited, or computed with other options or inputs)
// is set aside as DIR/failed/NAME.rejected.json, with the reason in NAME.rejected.txt, and the task runs again.
void set_aside(const std::string& dir, const std::string& name, const std::string& path, std::string why,
               bool progress) {
  why = why.substr(0, why.find("; fix: "));  // what was wrong with it; the fix is what this does
  const fs::path kept = fs::path(plan_failure_path(dir, name)).replace_extension(".rejected.json");
  std::error_code ec;
  fs::create_directories(kept.parent_path(), ec);
  fs::rename(path, kept, ec);
  require(!ec, "result '" + path + "' cannot be used (" + why + ") and cannot be moved to '" + kept.string() + "': " +
                   ec.message() + "; fix: delete it and run the task again");
  try {
    write_file_atomic(fs::path(kept).replace_extension(".txt").string(), why + "\n");
  } catch (const Error&) {  // the copy is kept; the reason is also on stderr
  }
  if (progress)
    std::cerr << "gradflow: " << name << ": its result could not be used (" << why << "); set aside as " << kept.string()
              << ", computing it again\n";
}

// Merge: every result, in plan order; the missing ones listed (with the command to rerun each) and refused unless
// allow_partial.
std::vector<Json> merge_results(const std::vector<ResumableJob>& jobs, const PlanStep& step, const std::string& noun,
                                RunnerStats* stats) {
  std::vector<Json> out(jobs.size());
  std::vector<std::string> kernels(jobs.size());
  Json missing = Json::array();
  for (size_t i = 0; i < jobs.size(); ++i) {
    std::string unusable;  // with allow_partial, a result that cannot be used counts as missing, with its reason
    try {
      out[i] = load_result_file((fs::path(plan_results_dir(step.dir)) / (jobs[i].name + ".json")).string(),
                                planned_configuration(jobs[i]), &kernels[i]);
    } catch (const Error& e) {
      if (!step.allow_partial) throw;
      unusable = e.what();
      out[i] = Json();
    }
    if (!out[i].is_null()) continue;
    missing.push_back(Json{{"id", i}, {"name", jobs[i].name}});
    const std::string failure = plan_failure_path(step.dir, jobs[i].name);
    std::string why = !unusable.empty()      ? "has a result that cannot be used: " + unusable
                      : fs::exists(failure) ? "failed: " + read_text(failure)
                                            : "missing";
    if (!why.empty() && why.back() == '\n') why.pop_back();
    std::cerr << "gradflow: task " << i << " (" << jobs[i].name << ") " << why << "; rerun: "
              << task_command(step.dir, static_cast<int>(i)) << "\n";
  }
  const size_t merged = jobs.size() - missing.size();
  require(merged > 0 || jobs.empty(), "no task of " + step.dir + " has a result yet; fix: run them first (gradflow "
                                      "slurm " + step.dir + " --submit, or gradflow task " + step.dir + " ID)");
  if (!missing.empty()) {
    require(step.allow_partial,
            std::to_string(missing.size()) + " of " + std::to_string(jobs.size()) + " tasks of " + step.dir +
                " have no result (listed above); fix: rerun them (gradflow slurm " + step.dir +
                " --submit runs only those), or merge what is there with --allow-partial");
    std::cerr << "gradflow: merging " << merged << " of " << jobs.size() << " " << noun
              << "s; the report lists the missing ones under \"partial\"\n";
    if (stats) stats->partial = Json{{"tasks", jobs.size()}, {"merged", merged}, {"missing", missing}};
  }
  const std::vector<std::string> distinct = distinct_kernels(
      jobs, kernels, step.allow_mixed_kernels,
      "run the tasks of the second kernel again where OpenBLAS chooses the first (e.g. with %CORE% gradflow task " +
          shell_word(step.dir) + " ID; delete their results first), or merge with --allow-mixed-kernels (the report "
          "then lists every kernel)");
  if (stats) {
    stats->total = static_cast<int>(jobs.size()), stats->resumed = static_cast<int>(merged);
    stats->kernels = distinct;
  }
  return out;
}

}  // namespace

std::string report_kernel(const Json& report) {
  if (report.is_object() && report.contains("config") && report["config"].is_object() &&
      report["config"].contains("device") && report["config"]["device"].is_string())
    return report["config"]["device"].get<std::string>() + " (host: " + blas_kernel() + ")";
  return blas_kernel();
}

Json kernels_json(const std::vector<std::string>& kernels) {
  if (kernels.empty()) return Json();
  if (kernels.size() == 1) return kernels[0];
  return kernels;
}

ThreadShare share_threads(int threads, int jobs, bool one_at_a_time) {
  ThreadShare s;
  s.threads = std::max(1, threads > 0 ? threads : omp_get_max_threads());
  // never more jobs at once than jobs or threads; one at a time (a device): one job with every thread
  s.side_by_side = one_at_a_time ? 1 : std::max(1, std::min(s.threads, jobs));
  return s;
}

namespace {
// The per-layer gradient norms of a report (and every entry under the *_norms ones): non-negative numbers.
bool is_gradient_norm(const std::string& k) {
  for (const char* name : {"grad_norm", "input_grad_norm", "output_grad_norm", "param_grad_norm", "grad_norm_total",
                           "grad_norm_x_a", "grad_norm_x_d", "grad_norms", "param_grad_norms", "attention_grad_norms"})
    if (k == name) return true;
  return false;
}

// The first problem of a report's numbers: a non-finite number (JSON's 1e999), or, under a layer's gradient norm,
// anything but a non-negative number. "" when there is none.
std::string number_problem(const Json& j, const std::string& path, bool norm) {
  if (j.is_object() || j.is_array()) {
    for (const auto& [k, v] : j.items()) {
      const std::string p = j.is_array() ? path + "[" + k + "]" : (path.empty() ? k : path + "." + k);
      const std::string bad = number_problem(v, p, norm);
      if (!bad.empty()) return bad;
    }
    return "";
  }
  if (j.is_number() && !std::isfinite(j.get<double>())) return "'" + path + "' is not finite";
  if (norm && !(j.is_number() && j.get<double>() >= 0))
    return "'" + path + "' is " + (j.is_number() ? "negative" : j.dump()) + ", not a norm";
  return "";
}
}  // namespace

std::string report_problem(const Json& report) {
  if (!report.is_object()) return "its \"report\" is not an object";
  if (!report.contains("config") || !report["config"].is_object()) return "its report has no \"config\" object";
  if (report.contains("layers")) {
    if (!report["layers"].is_array()) return "its report's \"layers\" is not a list";
    for (size_t l = 0; l < report["layers"].size(); ++l) {
      const Json& layer = report["layers"][l];
      if (!layer.is_object()) return "an entry of its report's \"layers\" is not an object";
      for (const auto& [k, v] : layer.items()) {
        const std::string bad = number_problem(v, "layers[" + std::to_string(l) + "]." + k, is_gradient_norm(k));
        if (!bad.empty()) return bad;
      }
    }
  }
  return number_problem(report, "", false);
}

namespace {
// How a result that cannot be used is computed again.
const std::string kRedo = "delete it and run its configuration again (the same command with --resume), or, in a plan, "
                          "run its task again (gradflow task DIR ID replaces it)";
}  // namespace

Json load_result_file(const std::string& path, const Json& expected, std::string* kernel) {
  if (kernel) kernel->clear();
  if (!fs::exists(path)) return Json();
  Json j;
  try {
    j = Json::parse(read_text(path));
  } catch (const std::exception&) {
    throw Error("'" + path + "' is not a gradflow result file; fix: " + kRedo);
  }
  require(j.is_object() && j.contains("configuration") && j.contains("report"),
          "'" + path + "' is not a gradflow result file; fix: " + kRedo);
  if (j["configuration"] != expected) {
    const std::string changed = input_change(j["configuration"], expected);
    throw Error("result '" + path + "' was computed " + (changed.empty() ? "with other options than this run's"
                                                                        : "from other inputs: " + changed) +
                "; fix: use a new --resume directory for a changed experiment (or delete the old one); a plan's task "
                "replaces it (gradflow task DIR ID)");
  }
  const std::string bad = report_problem(j["report"]);
  require(bad.empty(), "result '" + path + "': " + bad + " (an edited or corrupt result); fix: " + kRedo);
  if (j.contains("blas_kernel")) {
    require(j["blas_kernel"].is_string() && !j["blas_kernel"].get<std::string>().empty(),
            "result '" + path + "': its \"blas_kernel\" is not a kernel's name (an edited or corrupt result); fix: " +
                kRedo);
    if (kernel) *kernel = j["blas_kernel"].get<std::string>();
  }
  return j["report"];
}

Json expected_config(const RunConfig& rc) {
  Model model(rc.model);
  return run_config_json(model, rc, nullptr);
}

std::vector<Json> run_resumable(const std::vector<ResumableJob>& jobs, const RunnerOptions& opts, const std::string& noun,
                                const std::function<std::string(const Json&)>& describe, RunnerStats* stats) {
  const PlanStep& step = opts.plan;
  if (step.kind == Kind::Write) {
    write_plan(jobs, step, noun, opts.progress);
    return {};
  }
  if (step.kind != Kind::None) check_plan(jobs, step.dir);
  if (step.kind == Kind::Merge) return merge_results(jobs, step, noun, stats);
  const int n = static_cast<int>(jobs.size());
  std::vector<Json> out(jobs.size());
  std::vector<int> selected;  // the jobs this call is about: all, or a plan's tasks
  if (step.kind == Kind::Task) {
    selected = parse_task_ids(step.task_ids, n);
  } else {
    for (int i = 0; i < n; ++i) selected.push_back(i);
  }
  const std::string dir = step.kind == Kind::Task ? plan_results_dir(step.dir) : opts.resume_dir;
  const bool resume = !dir.empty();
  const auto path_of = [&](int i) { return (fs::path(dir) / (jobs[i].name + ".json")).string(); };
  if (step.kind == Kind::Task) {
    std::vector<std::string> names;
    for (int i : selected) names.push_back(jobs[i].name);
    prepare_dir(dir, &names);
  } else if (resume) {
    prepare_dir(dir);
  }
  std::vector<int> todo;
  std::vector<std::string> kernels(jobs.size());
  for (int i : selected) {
    if (resume && step.kind == Kind::Task) {  // a result of this task that cannot be used is set aside, not kept
      try {
        out[i] = load_result_file(path_of(i), planned_configuration(jobs[i]), &kernels[i]);
      } catch (const Error& e) {
        set_aside(step.dir, jobs[i].name, path_of(i), e.what(), opts.progress);
        out[i] = Json();
      }
    } else if (resume) {
      out[i] = load_result_file(path_of(i), planned_configuration(jobs[i]), &kernels[i]);
    }
    if (out[i].is_null()) todo.push_back(i);
  }
  const std::string resume_fix = "run it where OpenBLAS chooses the kernel of the results in " + shell_word(dir) +
                                 " (e.g. with %CORE%), or use a new --resume directory";
  if (step.kind != Kind::Task) {  // before any work: what was loaded, and what this run would add to it
    const std::vector<std::string> loaded = distinct_kernels(jobs, kernels, false, resume_fix);
    const std::string& mine = opts.kernel.empty() ? blas_kernel() : opts.kernel;
    if (!todo.empty() && !loaded.empty() && loaded[0] != mine) {
      size_t at = 0;
      while (kernels[at] != loaded[0]) ++at;
      throw Error("the results in " + dir + " were computed on the BLAS kernels '" + loaded[0] + "' (" +
                  jobs[at].name + "), but this run computes on '" + mine + "', which differ in the last bits; fix: " +
                  with_coretype(resume_fix, loaded[0]));
    }
  }
  const int resumed = static_cast<int>(selected.size() - todo.size());
  if (opts.progress && resume)
    std::cerr << "gradflow: " << resumed << " of " << selected.size() << " " << noun << "s already done in " << dir
              << "\n";
  const ThreadShare share = share_threads(opts.threads, static_cast<int>(todo.size()), opts.one_at_a_time);
  const int levels = omp_get_max_active_levels();  // the workers' teams nest in theirs: one level more, for the run
  if (share.side_by_side > 1 && share.most() > 1) omp_set_max_active_levels(std::max(levels, 2));
  std::vector<std::string> errors(jobs.size());
  std::vector<int> error_code(jobs.size(), 0);
  int finished = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(share.side_by_side)
  for (int t = 0; t < static_cast<int>(todo.size()); ++t) {
    const int i = todo[static_cast<size_t>(t)];
    // this worker's own team size for the engine (see the file comment)
    omp_set_num_threads(share.engine_threads(omp_get_thread_num()));
    try {
      const CancelCatchHere catches;  // this job's own checks may throw Cancelled: caught below, inside the region
      if (cancel_requested()) throw Cancelled();  // a front end asked to stop: no further job starts
      if (std::find(step.inject_fault.begin(), step.inject_fault.end(), i) != step.inject_fault.end())
        throw Error("injected fault (the test's PlanStep::inject_fault names task " + std::to_string(i) +
                    "); fix: rerun the task without the test's fault");
      Json report = jobs[i].compute();
      kernels[i] = report_kernel(report);
      if (resume) {  // the configuration as planned (to check it on resume), the kernels it ran on, and its report
        const Json saved{{"configuration", planned_configuration(jobs[i])}, {"blas_kernel", kernels[i]}, {"report", report}};
        write_file_atomic(path_of(i), json_text(saved, 1) + "\n");
      }
      out[i] = std::move(report);
    } catch (const Error& e) {
      errors[i] = e.what();
      error_code[i] = static_cast<int>(e.kind()) + 1;
    } catch (const std::exception& e) {
      errors[i] = e.what();
      error_code[i] = static_cast<int>(ErrorKind::Internal) + 1;
    }
    if (step.kind == Kind::Task) {  // the last attempt's error, for merge's list of missing tasks
      const std::string failure = plan_failure_path(step.dir, jobs[i].name);
      std::error_code ec;
      if (errors[i].empty()) {
        fs::remove(failure, ec);
      } else {
        try {
          fs::create_directories(fs::path(failure).parent_path(), ec);
          write_file_atomic(failure, errors[i] + "\n");
        } catch (const Error&) {  // the task's own error is what matters
        }
      }
    }
#pragma omp critical(gradflow_runner_progress)
    {
      ++finished;
      if (opts.progress)
        std::cerr << "gradflow: [" << finished << "/" << todo.size() << "] " << jobs[i].name
                  << (describe && errors[i].empty() ? describe(out[i]) : "") << (errors[i].empty() ? "" : " FAILED")
                  << "\n";
    }
  }
  omp_set_max_active_levels(levels);
  check_cancel();  // cancelled jobs failed with Cancelled's message: the front end hears of it as such
  for (int i = 0; i < n; ++i)
    if (error_code[i]) throw Error(noun + " " + jobs[i].name + ": " + errors[i], static_cast<ErrorKind>(error_code[i] - 1));
  // a task's results are merged later (merge checks their kernels); the others are this run's report
  const std::vector<std::string> distinct =
      step.kind == Kind::Task ? std::vector<std::string>{} : distinct_kernels(jobs, kernels, false, resume_fix);
  if (stats) *stats = RunnerStats{n, resumed, static_cast<int>(todo.size()), Json(), distinct};
  if (step.kind == Kind::Task) return {};
  return out;
}

std::vector<Json> run_configurations(const std::vector<Configuration>& configs, const RunnerOptions& opts,
                                     RunnerStats* stats) {
  const auto jobs = resumable_jobs(
      configs, [](const Configuration& c) { return expected_config(c.rc); },
      [](const Configuration& c) {
        RunConfig rc = c.rc;
        rc.analysis.progress = false;
        return analyze(rc);
      });
  return run_resumable(jobs, opts, "configuration", nullptr, stats);
}

}  // namespace gradflow
