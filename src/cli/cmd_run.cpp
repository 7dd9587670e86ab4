// cmd_run.cpp — `gradflow run SPEC.json... [--reduced] [--out-dir DIR]`: runs saved compare/sweep/train-sweep
// experiments (include/gradflow/experiments/spec.hpp) through the library's run_spec, which parses a spec's options
// by the commands' own table, so every flag works in a spec; the report records the spec and the file it came from.
// --reduced applies the spec's "reduced" overrides (a seconds-long smoke run, used by the tests).
#include <filesystem>

#include "process/interrupt.hpp"
#include "process/runtime_env.hpp"
#include "cli/commands.hpp"
#include "cli/experiment_run.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/experiments/spec.hpp"

namespace gradflow::cli {
namespace {
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

struct RunOptions {
  std::vector<std::string> specs;
  bool reduced = false, quiet = false;
  std::string out_dir, json, csv, resume, plan;
  int threads = -1;
  TerminalOptions terminal;
};

void run_one(const std::string& path, const RunOptions& o, bool many) {
  Json spec = load_spec(path);
  if (o.reduced && spec.contains("reduced")) {
    for (const auto& [k, v] : spec["reduced"].items()) spec["options"][k] = v;
    spec.erase("reduced");
    // the statements name groups of the full sizes: the reduced run decides its own (none when the spec gives none)
    if (spec.contains("reduced_verdicts")) spec["verdicts"] = spec["reduced_verdicts"];
    else spec.erase("verdicts");
    spec.erase("reduced_verdicts");
  }
  // the paths a spec (or a report's recorded spec) names for its outputs are never reused: a run writes where its
  // own --json/--csv/--out-dir say, resumes where its own --resume says, and otherwise prints the table only
  if (spec.contains("options"))
    for (const char* key : {"json", "csv", "resume", "spec-file", "plan"}) spec["options"].erase(key);
  const std::string stem = fs::path(path).stem().string();
  SpecRun how = command_line_run();
  if (!o.out_dir.empty()) {
    how.json = (fs::path(o.out_dir) / (stem + ".json")).string();
    how.csv = (fs::path(o.out_dir) / (stem + ".csv")).string();
  }
  if (!o.json.empty()) how.json = o.json;
  if (!o.csv.empty()) how.csv = o.csv;
  if (!o.resume.empty()) how.resume = many ? (fs::path(o.resume) / stem).string() : o.resume;
  if (!o.plan.empty()) {
    how.plan.kind = PlanStep::Kind::Write;
    how.plan.dir = many ? (fs::path(o.plan) / stem).string() : o.plan;
  }
  how.threads = o.threads;
  how.quiet = o.quiet;
  how.spec_file = path;
  hand_out(run_spec(spec, "spec '" + path + "'", how), o.terminal);
}

void run_run(const RunOptions& o) {
  const bool many = o.specs.size() > 1;
  require(!many || (o.json.empty() && o.csv.empty()),
          "--json/--csv name one file but " + std::to_string(o.specs.size()) + " specs were given; fix: use --out-dir DIR");
  if (!o.out_dir.empty()) {
    std::error_code ec;
    fs::create_directories(o.out_dir, ec);
    require(!ec, "--out-dir '" + o.out_dir + "' cannot be created: " + ec.message() + "; fix: choose a writable path");
  }
  for (const auto& s : o.specs) load_spec(s);  // every spec checked before the first one runs
  for (size_t i = 0; i < o.specs.size(); ++i) {
    if (many && i > 0)
      process::set_interrupt_context(std::to_string(i) + " of " + std::to_string(o.specs.size()) + " specs finished" +
                                     (o.out_dir.empty() ? "" : ", their reports are in " + o.out_dir) +
                                     "; the next was " + o.specs[i]);
    run_one(o.specs[i], o, many);
  }
}

}  // namespace

void setup_run(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  auto* sub = app.add_subcommand("run", "run saved compare/sweep/train-sweep specs (examples/claims/*.json)");
  sub->add_option("specs", opts->specs, "spec files")->required()->check(CLI::ExistingFile);
  sub->add_flag("--reduced", opts->reduced, "apply each spec's \"reduced\" overrides (a seconds-long smoke run)");
  sub->add_option("--out-dir", opts->out_dir, "write DIR/<spec name>.json and .csv")->check(non_empty_path());
  sub->add_option("--json", opts->json, "write the report here (one spec only)")->check(non_empty_path());
  sub->add_option("--csv", opts->csv, "write the long-format CSV here (one spec only)")->check(non_empty_path());
  sub->add_option("--resume", opts->resume, "keep finished configurations in DIR (DIR/<spec name> for several specs)")->check(non_empty_path());
  sub->add_option("--plan", opts->plan, "write each spec's plan into DIR (DIR/<spec name> for several specs) "
                                        "instead of running it (docs/cluster.md)")->check(non_empty_path());
  sub->add_option("--threads", opts->threads,
                  "threads, shared among the configurations that run at once (default: the spec's, else all cores)")
      ->check(CLI::Range(0, kMaxThreads));
  sub->add_flag("-q,--quiet", opts->quiet, "no tables, no progress");
  add_terminal_options(*sub, opts->terminal);
  sub->callback([opts] { run_run(*opts); });
}

}  // namespace gradflow::cli
