// train_command.hpp — `gradflow train`'s options and run as a library call, registered on a CLI::App by the
// command line (src/cli/cmd_train.cpp) and the Python module (src/python) alike.
#pragma once
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "gradflow/train/train_options.hpp"

namespace gradflow {

struct TrainRequest {
  TrainFlags flags;
  std::string placement = "post";  // --placement
  Index layers = 6;                // --layers
};

// Registers every option of `gradflow train` but --json, --csv and -q on `sub`; values land in `r`.
void add_train_options(CLI::App& sub, TrainRequest& r);
// The TrainConfig `sub` (parsed) asks for: with --weights, the checkpoint's block and depth unless --placement or
// --layers was given (then checked against it).
TrainConfig resolve_train_request(const CLI::App& sub, const TrainRequest& r);

}  // namespace gradflow
