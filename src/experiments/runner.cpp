// runner.cpp — see runner.hpp. Parallel over configurations with `omp parallel for schedule(dynamic, 1)`;
// each worker sets its own OpenMP team size to 1 so the engine's loops and OpenBLAS (OpenMP build) run serially
// inside it: identical numbers whatever the thread count, and no oversubscription of the cores.
#include "gradflow/experiments/runner.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "gradflow/core/error.hpp"
#include "gradflow/model/model.hpp"
#include "gradflow/report/atomic_file.hpp"
#include "gradflow/run/run_config.hpp"

namespace gradflow {
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

// Prepares DIR: creates it, removes the temporary files a killed run may have left (NAME.json.tmp.PID).
void prepare_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  require(!ec && fs::is_directory(dir), "--resume '" + dir + "' cannot be created: " + ec.message() +
                                            "; fix: choose a writable directory");
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find(".json.tmp.") != std::string::npos) fs::remove(e.path(), ec);
  }
}

// Loads a finished job's report, or returns null when there is none.
Json load_finished(const std::string& path, const std::function<Json()>& expected) {
  if (!fs::exists(path)) return Json();
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  Json j;
  try {
    j = Json::parse(ss.str());
  } catch (const std::exception&) {
    throw Error("--resume: '" + path + "' is not a gradflow result file; fix: delete it, or use a new --resume directory");
  }
  require(j.is_object() && j.contains("configuration") && j.contains("report"),
          "--resume: '" + path + "' is not a gradflow result file; fix: delete it, or use a new --resume directory");
  require(j["configuration"] == expected(),
          "--resume: '" + path + "' was computed with other options than this run's; fix: use a new --resume " +
              "directory for a changed experiment (or delete the old one)");
  return j["report"];
}

}  // namespace

Json expected_config(const RunConfig& rc) {
  Model model(rc.model);
  return run_config_json(model, rc, nullptr);
}

std::vector<Json> run_resumable(const std::vector<ResumableJob>& jobs, const RunnerOptions& opts, const std::string& noun,
                                const std::function<std::string(const Json&)>& describe, RunnerStats* stats) {
  const int n = static_cast<int>(jobs.size());
  std::vector<Json> out(jobs.size());
  std::vector<int> todo;
  const bool resume = !opts.resume_dir.empty();
  const auto path_of = [&](int i) { return (fs::path(opts.resume_dir) / (jobs[i].name + ".json")).string(); };
  if (resume) prepare_dir(opts.resume_dir);
  for (int i = 0; i < n; ++i) {
    if (resume) out[i] = load_finished(path_of(i), jobs[i].configuration);
    if (out[i].is_null()) todo.push_back(i);
  }
  const int resumed = n - static_cast<int>(todo.size());
  if (opts.progress && resume)
    std::cerr << "gradflow: " << resumed << " of " << n << " " << noun << "s already done in " << opts.resume_dir
              << "\n";
  // never more threads than jobs (a thread per job is the most that can run at once)
  const int threads = std::max(1, std::min(opts.threads > 0 ? opts.threads : omp_get_max_threads(),
                                           static_cast<int>(todo.size())));
  std::vector<std::string> errors(jobs.size());
  std::vector<int> error_code(jobs.size(), 0);
  int finished = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (int t = 0; t < static_cast<int>(todo.size()); ++t) {
    const int i = todo[static_cast<size_t>(t)];
    omp_set_num_threads(1);  // the engine inside runs serially (see the file comment)
    try {
      Json report = jobs[i].compute();
      if (resume) {  // the configuration as planned (to check it on resume) and its report
        const Json saved{{"configuration", jobs[i].configuration()}, {"report", report}};
        write_file_atomic(path_of(i), saved.dump(1) + "\n");
      }
      out[i] = std::move(report);
    } catch (const Error& e) {
      errors[i] = e.what();
      error_code[i] = static_cast<int>(e.kind()) + 1;
    } catch (const std::exception& e) {
      errors[i] = e.what();
      error_code[i] = static_cast<int>(ErrorKind::Internal) + 1;
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
  for (int i = 0; i < n; ++i)
    if (error_code[i]) throw Error(noun + " " + jobs[i].name + ": " + errors[i], static_cast<ErrorKind>(error_code[i] - 1));
  if (stats) *stats = RunnerStats{n, resumed, static_cast<int>(todo.size())};
  return out;
}

std::vector<Json> run_configurations(const std::vector<Configuration>& configs, const RunnerOptions& opts,
                                     RunnerStats* stats) {
  std::vector<ResumableJob> jobs;
  jobs.reserve(configs.size());
  for (const auto& c : configs) {
    const std::string file = c.file_name();
    jobs.push_back(ResumableJob{file.substr(0, file.size() - 5), [&c] { return expected_config(c.rc); },
                                [&c] {
                                  RunConfig rc = c.rc;
                                  rc.analysis.progress = false;
                                  return analyze(rc);
                                }});
  }
  return run_resumable(jobs, opts, "configuration", nullptr, stats);
}

}  // namespace gradflow
