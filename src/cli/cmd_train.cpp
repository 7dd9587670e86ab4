// cmd_train.cpp — `gradflow train [model options] --task TASK --steps S --lr LR --warmup W --batch B --json run.json`:
// trains a small causal language model in double precision (or in mixed precision with --precision; docs/training.md)
// and writes the train report (docs/report-schema.md, "train report") atomically; --csv adds one row per logged step
// and layer. The options are the library's (commands/train_command.hpp), shared with the Python module.
#include <unistd.h>

#include <iostream>

#include "cli/commands.hpp"
#include "gradflow/commands/train_command.hpp"
#include "gradflow/report/atomic_file.hpp"
#include "gradflow/train/train_csv.hpp"
#include "gradflow/report/json_text.hpp"
#include "process/interrupt.hpp"

namespace gradflow::cli {
namespace {
struct TrainCmdOptions {
  TrainRequest request;
  std::string json, csv;
  bool quiet = false;
};

void run_train(const CLI::App& sub, const TrainCmdOptions& o) {
  TrainConfig c = resolve_train_request(sub, o.request);
  // live progress on a terminal only: the summary on stdout repeats every logged row, so a log file that takes
  // both streams would hold each row twice
  c.progress = !o.quiet && ::isatty(STDERR_FILENO);
  check_outputs({{"--json", o.json}, {"--csv", o.csv}}, {{"--weights", o.request.flags.model.rc.weights}});
  process::set_interrupt_note(
      c.save_every > 0 ? "the checkpoints written so far are in " + c.checkpoint_dir +
                             " (a run does not resume from them: rerun to train again)"
                       : "nothing was written (the report is written when training finishes); rerun to train again");
  const auto report = train(c);
  if (!o.quiet) print_train_summary(std::cout, report);
  if (!o.json.empty()) write_file_atomic(o.json, json_text(report, 1) + "\n");
  if (!o.csv.empty()) write_file_atomic(o.csv, train_csv(report));
}
}  // namespace

void setup_train(CLI::App& app) {
  auto opts = std::make_shared<TrainCmdOptions>();
  auto* sub = app.add_subcommand("train", "train a small causal LM on a synthetic task, with per-layer gradient records");
  add_train_options(*sub, opts->request);
  sub->add_option("--json", opts->json, "write the train report to this file")->check(non_empty_path());
  sub->add_option("--csv", opts->csv, "write the log as CSV (step,layer,metric,value)")->check(non_empty_path());
  sub->add_flag("-q,--quiet", opts->quiet, "no progress, no summary");
  sub->callback([sub, opts] { run_train(*sub, *opts); });
}

}  // namespace gradflow::cli
