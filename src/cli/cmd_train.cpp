// cmd_train.cpp — `gradflow train [model options] --task TASK --steps S --lr LR --warmup W --batch B --json run.json`:
// trains a small causal language model in double precision (docs/training.md) and writes the train report
// (docs/report-schema.md, "train report") atomically; --csv adds one row per logged step and layer.
#include <unistd.h>

#include <cmath>
#include <iostream>
#include <sstream>

#include "process/interrupt.hpp"
#include "process/runtime_env.hpp"
#include "cli/commands.hpp"
#include "gradflow/train/train_options.hpp"
#include "gradflow/report/atomic_file.hpp"
#include "gradflow/train/train_csv.hpp"

namespace gradflow::cli {
namespace {
struct TrainCmdOptions {
  TrainFlags flags;
  std::string placement = "post";
  Index layers = 6;
  std::string json, csv;
  bool quiet = false;
};

void run_train(const CLI::App& sub, const TrainCmdOptions& o) {
  // --weights: the checkpoint's block and depth unless --placement/--layers are given (then checked against it)
  const bool from_weights = !o.flags.model.rc.weights.empty();
  const bool placement_given = sub.get_option("--placement")->count() > 0, layers_given = sub.get_option("--layers")->count() > 0;
  TrainConfig c = resolve_train(o.flags, from_weights && !placement_given ? std::nullopt : std::optional<std::string>(o.placement),
                                from_weights && !layers_given ? std::nullopt : std::optional<Index>(o.layers));
  // live progress on a terminal only: the summary on stdout repeats every logged row, so a log file that takes
  // both streams would hold each row twice
  c.progress = !o.quiet && ::isatty(STDERR_FILENO);
  check_outputs({{"--json", o.json}, {"--csv", o.csv}}, {{"--weights", o.flags.model.rc.weights}});
  process::set_interrupt_note(
      c.save_every > 0 ? "the checkpoints written so far are in " + c.checkpoint_dir +
                             " (a run does not resume from them: rerun to train again)"
                       : "nothing was written (the report is written when training finishes); rerun to train again");
  const auto report = train(c);
  if (!o.quiet) print_train_summary(std::cout, report);
  if (!o.json.empty()) write_file_atomic(o.json, report.dump(1) + "\n");
  if (!o.csv.empty()) write_file_atomic(o.csv, train_csv(report));
}
}  // namespace

void setup_train(CLI::App& app) {
  auto opts = std::make_shared<TrainCmdOptions>();
  auto* sub = app.add_subcommand("train", "train a small causal LM on a synthetic task, with per-layer gradient records");
  sub->add_option("--placement", opts->placement, "where the norm sits (see `gradflow placements`)")->capture_default_str();
  sub->add_option("--layers", opts->layers, "number of blocks L")->capture_default_str();
  add_train_flags(*sub, opts->flags);
  add_model_option(*sub, opts->flags.model, "weights")
      ->description("start the blocks (and final norm) from a checkpoint: a GPT-2 folder or file (hf-gpt2) or a "
                    "torch-encoder state_dict; L, d, d_ff (and GPT-2's heads, activation, eps) come from it; the "
                    "task's embeddings and head are drawn from --seed as without it (docs/training.md)");
  add_model_option(*sub, opts->flags.model, "weights-format");
  auto& t = opts->flags.tc;
  sub->add_option("--lr", t.lr, "peak learning rate")->capture_default_str();
  sub->add_option("--warmup", t.warmup, "linear warmup steps W")->capture_default_str();
  sub->add_option("--save-every", t.save_every, "write a safetensors checkpoint every K steps (and at the end)");
  sub->add_option("--checkpoint-dir", t.checkpoint_dir, "directory of the checkpoints (step_NNNNNN.safetensors + .input.npy)")->check(non_empty_path());
  sub->add_flag("--save-batches", t.save_batches, "also write every step's batch (tokens, targets) as .npy into --checkpoint-dir");
  sub->add_option("--threads", t.threads, "OpenMP threads over a batch's sequences (0: all; results do not depend on it)")
      ->check(CLI::Range(0, process::kMaxThreads))
      ->capture_default_str();
  sub->add_option("--json", opts->json, "write the train report to this file")->check(non_empty_path());
  sub->add_option("--csv", opts->csv, "write the log as CSV (step,layer,metric,value)")->check(non_empty_path());
  sub->add_flag("-q,--quiet", opts->quiet, "no progress, no summary");
  sub->callback([sub, opts] { run_train(*sub, *opts); });
}

}  // namespace gradflow::cli
