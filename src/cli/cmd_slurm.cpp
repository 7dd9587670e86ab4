// cmd_slurm.cpp — `gradflow slurm DIR [--partition P] [--time T] [--cpus-per-task C] [--mem M] [--max-running K]
// [--gres G] [--merge-time T] [--merge-mem M] [--account A] [--max-array-size N] [--json F] [--csv F] [--submit]`: writes DIR/slurm/array.sbatch (a job array
// over the plan's tasks that have no result, throttled with %K, packed when the plan has more tasks than
// MaxArraySize allows) and DIR/slurm/merge.sbatch (gradflow merge), and with --submit submits both with sbatch, the
// merge after the array (--dependency=afterany), printing the job IDs (experiments/slurm_script.hpp,
// docs/cluster.md).
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/experiments/plan_dir.hpp"
#include "gradflow/experiments/slurm_script.hpp"
#include "gradflow/report/atomic_file.hpp"

namespace gradflow::cli {
namespace {
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

struct SlurmOptions {
  SlurmSettings s;
  std::string dir, gradflow;
  int max_array_size = 0;  // 0: ask scontrol, else kDefaultMaxArraySize
  bool submit = false;
};

// Runs a shell command; its standard output and error together, and its exit status.
std::pair<std::string, int> capture(const std::string& command) {
  std::FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (!p) return {"cannot start: " + command, 127};
  std::string out;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = ::pclose(p);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : 128};
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

int max_array_size(int given, bool progress) {
  if (given > 0) return given;
  const auto [text, rc] = capture("scontrol show config");
  const int n = rc == 0 ? parse_max_array_size(text) : 0;
  if (n > 0) return n;
  if (progress)
    std::cerr << "gradflow: MaxArraySize unknown (`scontrol show config` " << (rc == 0 ? "does not say" : "failed")
              << "); using Slurm's default " << kDefaultMaxArraySize << " (set it with --max-array-size)\n";
  return kDefaultMaxArraySize;
}

// Submits `script` with sbatch (and `extra` options); the job ID it prints with --parsable.
std::string submit(const std::string& script, const std::string& extra) {
  const auto [out, rc] = capture("sbatch --parsable " + extra + shell_quote(script));
  const std::string text = trimmed(out);
  require(rc == 0 && !text.empty(), "sbatch " + script + " failed (exit " + std::to_string(rc) + "): " + text +
                                        "; fix: check the #SBATCH options (--partition, --account, --time) and that "
                                        "sbatch reaches the cluster");
  const std::string id = text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
  return id.substr(0, id.find(';'));  // "ID;cluster" on federated clusters
}

// A plan that records its cost (analyze --plan: the streamed sweep's estimate where it was written): the core-hours
// of the tasks to run, before anything is submitted.
void print_estimate(const Json& manifest, size_t to_run) {
  if (!manifest.contains("estimate") || !manifest["estimate"].is_object()) return;
  const Json& e = manifest["estimate"];
  if (!e.contains("core_hours") || !e["core_hours"].is_number() || !e.contains("dgemm_flops_per_second") ||
      !e["dgemm_flops_per_second"].is_number() || !e.contains("threads") || !e["threads"].is_number())
    return;
  const double all = e["core_hours"].get<double>(), tasks = static_cast<double>(manifest["tasks"].size());
  char line[320];
  std::snprintf(line, sizeof line,
                "estimated %.3g core-hours for the %zu tasks to run (%.3g in all, %.3g per task), at the DGEMM rate "
                "of the machine that wrote the plan (%.3g GFLOP/s on %d threads; docs/scaling.md)\n",
                all * static_cast<double>(to_run) / tasks, to_run, all, all / tasks,
                e["dgemm_flops_per_second"].get<double>() / 1e9, e["threads"].get<int>());
  std::cout << line;
}

void run_slurm(SlurmOptions o) {
  const Json manifest = read_plan_manifest(o.dir);
  const int tasks = static_cast<int>(manifest["tasks"].size());
  const std::vector<int> missing = plan_missing_tasks(o.dir, manifest);
  SlurmSettings& s = o.s;
  s.dir = fs::absolute(o.dir).lexically_normal().string();
  if (!s.dir.empty() && s.dir.size() > 1 && s.dir.back() == '/') s.dir.pop_back();
  s.gradflow = o.gradflow.empty() ? fs::read_symlink("/proc/self/exe").string() : fs::absolute(o.gradflow).string();
  s.json = fs::absolute(s.json.empty() ? fs::path(o.dir) / "report.json" : fs::path(s.json)).string();
  if (!s.csv.empty()) s.csv = fs::absolute(s.csv).string();
  s.name = "gradflow-" + fs::path(s.dir).filename().string();
  validate_slurm_settings(s);  // before anything is written: a value outside Slurm's form never reaches a script
  check_outputs_outside_plan(o.dir, {{"--json", s.json}, {"--csv", s.csv}});
  check_outputs({{"--json", s.json}, {"--csv", s.csv}}, plan_input_paths(manifest));
  const ArrayLayout layout = array_layout(tasks, missing, max_array_size(o.max_array_size, true), s.cpus_per_task);
  const fs::path slurm_dir = fs::path(o.dir) / "slurm";
  std::error_code ec;
  fs::create_directories(slurm_dir, ec);  // also where the jobs' logs go: it must exist before they start
  require(!ec, "'" + slurm_dir.string() + "' cannot be created: " + ec.message() + "; fix: use a writable plan directory");
  const std::string array = (slurm_dir / "array.sbatch").string(), merge = (slurm_dir / "merge.sbatch").string();
  write_file_atomic(merge, slurm_merge_script(s));
  if (missing.empty()) {
    std::error_code ignore;
    fs::remove(array, ignore);  // an old array script would rerun nothing; none is left to mislead
    std::cout << "every one of the " << tasks << " tasks of " << o.dir << " has a result: no array to run; merge with "
              << "`gradflow merge " << shell_word(o.dir) << " --json report.json`" << (o.submit ? " (nothing submitted)" : "")
              << "\n";
    return;
  }
  write_file_atomic(array, slurm_array_script(s, layout));
  print_estimate(manifest, missing.size());
  std::cout << "wrote " << array << ": " << missing.size() << " of " << tasks << " tasks in "
            << layout.elements.size() << " array elements (" << layout.pack << " task" << (layout.pack > 1 ? "s" : "")
            << " each)\nwrote " << merge << "\n";
  if (!o.submit) {
    std::cout << "submit with: jid=$(sbatch --parsable " << shell_word(array) << ") && sbatch --dependency=afterany:$jid "
              << shell_word(merge) << "   (or gradflow slurm " << shell_word(o.dir) << " --submit)\n";
    return;
  }
  const std::string array_id = submit(array, "");
  const std::string merge_id = submit(merge, "--dependency=afterany:" + array_id + " ");
  std::cout << "array job " << array_id << "\nmerge job " << merge_id << "\n";
}

}  // namespace

void setup_slurm(CLI::App& app) {
  auto opts = std::make_shared<SlurmOptions>();
  auto* sub = app.add_subcommand("slurm", "Slurm job array + merge job for a plan written with --plan (docs/cluster.md)");
  sub->add_option("dir", opts->dir, "the plan directory")->required();
  sub->add_option("--partition", opts->s.partition, "#SBATCH --partition (default: the cluster's)");
  sub->add_option("--time", opts->s.time, "#SBATCH --time per array element, e.g. 00:30:00");
  sub->add_option("--cpus-per-task", opts->s.cpus_per_task,
                  "CPUs per array element: it runs that many tasks side by side, one per CPU")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  sub->add_option("--mem", opts->s.mem, "#SBATCH --mem per array element, e.g. 4G");
  sub->add_option("--gres", opts->s.gres,
                  "#SBATCH --gres per array element, e.g. gpu:1 for a plan written with --device cuda");
  sub->add_option("--merge-time", opts->s.merge_time,
                  "#SBATCH --time of the merge job (default: the cluster's, not --time), e.g. 00:10:00");
  sub->add_option("--merge-mem", opts->s.merge_mem, "#SBATCH --mem of the merge job (default: the cluster's, not --mem)");
  sub->add_option("--max-running", opts->s.max_running, "array elements running at once (%K; default: no limit)")
      ->check(CLI::Range(1, 1000000));
  sub->add_option("--account", opts->s.account, "#SBATCH --account");
  sub->add_option("--max-array-size", opts->max_array_size,
                  "the cluster's MaxArraySize (default: from `scontrol show config`, else 1001)")
      ->check(CLI::Range(1, 100000000));
  sub->add_option("--json", opts->s.json, "the merge job's report (default: DIR/report.json)")->check(non_empty_path());
  sub->add_option("--csv", opts->s.csv, "the merge job's CSV (default: none)")->check(non_empty_path());
  sub->add_option("--gradflow", opts->gradflow, "the gradflow the jobs run (default: this one; compute nodes must "
                                                "see it at that path)")->check(CLI::ExistingFile);
  sub->add_flag("--submit", opts->submit, "submit both with sbatch and print their job IDs");
  sub->callback([opts] { run_slurm(*opts); });
}

}  // namespace gradflow::cli
