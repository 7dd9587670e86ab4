// cmd_experiments.cpp — the experiment commands, each a library call (commands/experiment_command.hpp) whose
// options the library registers, the same table a spec's options are parsed by:
//   `gradflow compare --placements post,pre --layers 6,12,24 --seeds 5 [model options]`: mean ± std over seeds of
//   every per-layer and summary metric for each (placement, depth), ratios between placements at equal depth,
//   power-law fits against depth; a table on stdout, --json and --csv (long format).
//   `gradflow sweep --placement post --layers 24 --param init-scale --values 1,0.5,inv-sqrt-2L --seeds K`: how every
//   summary metric moves with one model option (any model flag), with mean ± std over seeds, power-law exponents
//   along numeric values, and ratios between placements when --placement lists several. `--param2 B --values2 ...`
//   adds a second option: every value of --param with every value of --param2 (a phase diagram).
//   `gradflow train-sweep --placements post,pre --layers 6,12 --warmup 0,50,200 --lr 1e-4,1e-3 --seeds 3 [train
//   options] --json sweep.json [--csv sweep.csv] [--resume DIR]`: the grid of training runs, the per (placement,
//   depth) warmup / learning-rate summary (train/sweep.hpp), a table on stdout.
// Each takes --plan DIR: the plan written instead of run (docs/cluster.md).
#include "cli/commands.hpp"
#include "cli/experiment_run.hpp"

namespace gradflow::cli {
namespace {

void add_command(CLI::App& app, const std::string& name, const std::string& description) {
  auto* sub = app.add_subcommand(name, description);
  ExperimentRun run = add_experiment_command(*sub, name);
  auto terminal = std::make_shared<TerminalOptions>();
  add_terminal_options(*sub, *terminal);
  sub->callback([run, terminal] { hand_out(run(command_line_run()), *terminal); });
}

}  // namespace

void setup_compare(CLI::App& app) {
  add_command(app, "compare", "placements side by side: mean and std over seeds, ratios, CSV");
}

void setup_sweep(CLI::App& app) {
  add_command(app, "sweep", "sensitivity of the metrics to one option, with seed error bars");
}

void setup_train_sweep(CLI::App& app) {
  add_command(app, "train-sweep", "train a grid of placements x depths x warmups x learning rates x seeds");
}

}  // namespace gradflow::cli
