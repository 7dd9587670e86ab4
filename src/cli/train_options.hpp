// train_options.hpp — the flags `train` and `train-sweep` share: model shape (as analyze's, minus the files),
// task, optimizer and logging. One place defines each flag, its default and its help text.
#pragma once
#include <CLI/CLI.hpp>

#include "cli/scheme_options.hpp"
#include "gradflow/train/train.hpp"

namespace gradflow::cli {

struct TrainFlags {
  TrainConfig tc;
  std::string activation = "relu", norm = "layernorm", init_scale = "1";
  bool no_final_norm = false, causal = true;
  SchemeFlags scheme;  // --deepnorm-alpha, --mix-order, ...: every placement's own options
};

// Everything but --placement/--layers/--lr/--warmup (which train takes as one value, train-sweep as lists).
void add_train_flags(CLI::App& app, TrainFlags& f);
// The TrainConfig for one placement and depth (resolves enums and --init-scale, validates; Error on bad options).
TrainConfig resolve_train(const TrainFlags& f, const std::string& placement, Index layers);

}  // namespace gradflow::cli
