// train_options.hpp — the flags `train` and `train-sweep` share: model shape (as analyze's, minus the files),
// task, optimizer and logging. One place defines each flag, its default and its help text.
#pragma once
#include <CLI/CLI.hpp>

#include "cli/model_options.hpp"
#include "gradflow/train/train.hpp"

namespace gradflow::cli {

struct TrainFlags {
  TrainConfig tc;
  ModelSettings model;  // the architecture and initialization options, declared once (run/model_settings.hpp)
};

// Everything but --placement/--layers/--lr/--warmup (which train takes as one value, train-sweep as lists).
void add_train_flags(CLI::App& app, TrainFlags& f);
// The TrainConfig for one placement and depth (resolves enums and --init-scale, validates; Error on bad options).
TrainConfig resolve_train(const TrainFlags& f, const std::string& placement, Index layers);

}  // namespace gradflow::cli
