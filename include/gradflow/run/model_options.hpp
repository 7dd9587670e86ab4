// model_options.hpp — the model options as flags: every entry of the library's table (run/model_settings.hpp)
// registered on a CLI::App, so each is declared once for every command that builds a model, and for the spec
// parser of the experiment commands (commands/experiment_command.hpp).
#pragma once
#include <CLI/CLI.hpp>

#include "gradflow/run/model_settings.hpp"

namespace gradflow {

// Adds every model option to `app` (training: only those train and train-sweep take); values land in `s` through
// set_model_option, so a flag given twice keeps the last value, as CLI11 does.
void add_model_options(CLI::App& app, ModelSettings& s, bool training = false);
// Adds the one model option `name` (without dashes) to `app` (e.g. train's --weights); returns it.
CLI::Option* add_model_option(CLI::App& app, ModelSettings& s, const std::string& name);
// Registers the model option `name` of `app` again with a second spelling `alias` (e.g. "--placements" beside
// "--placement"), the same meaning; the own name stays first, the one a spec records. Returns it.
CLI::Option* alias_model_option(CLI::App& app, ModelSettings& s, const std::string& name, const std::string& alias);

}  // namespace gradflow
