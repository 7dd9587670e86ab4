// train_options.hpp — the flags `train` and `train-sweep` share: model shape (as analyze's, minus the files),
// task, optimizer and logging. One place defines each flag, its default and its help text (the command line's and a
// train-sweep spec's, commands/experiment_command.hpp).
#pragma once
#include <optional>

#include <CLI/CLI.hpp>

#include "gradflow/run/model_options.hpp"
#include "gradflow/train/train.hpp"

namespace gradflow {

struct TrainFlags {
  TrainConfig tc;
  ModelSettings model;  // the architecture and initialization options, declared once (run/model_settings.hpp)
};

// Everything but --placement/--layers/--lr/--warmup (which train takes as one value, train-sweep as lists).
void add_train_flags(CLI::App& app, TrainFlags& f);
// The TrainConfig for one placement and depth (resolves enums and --init-scale, validates; Error on bad options).
// With --weights (train only), an unset placement or depth is the checkpoint's; a bidirectional (BERT, RoBERTa)
// checkpoint is refused: every task is next-token prediction under the causal mask.
TrainConfig resolve_train(const TrainFlags& f, const std::optional<std::string>& placement, std::optional<Index> layers);

}  // namespace gradflow
