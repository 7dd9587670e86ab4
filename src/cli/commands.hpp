// commands.hpp — every subcommand registers itself on the app with setup_<cmd>; main.cpp lists them.
#pragma once
#include <CLI/CLI.hpp>

#include "gradflow/report/path_option.hpp"  // non_empty_path, for every option that names a file to write

namespace gradflow::cli {

void setup_analyze(CLI::App& app);
void setup_jacobian(CLI::App& app);
void setup_export(CLI::App& app);
void setup_placements(CLI::App& app);
void setup_compare(CLI::App& app);
void setup_sweep(CLI::App& app);
void setup_run(CLI::App& app);
void setup_plot(CLI::App& app);
void setup_train(CLI::App& app);
void setup_coord_check(CLI::App& app);
void setup_train_sweep(CLI::App& app);
void setup_task(CLI::App& app);
void setup_merge(CLI::App& app);
void setup_slurm(CLI::App& app);

}  // namespace gradflow::cli
