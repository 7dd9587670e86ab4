// commands.hpp — every subcommand registers itself on the app with setup_<cmd>; main.cpp lists them.
#pragma once
#include <CLI/CLI.hpp>

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
void setup_train_sweep(CLI::App& app);
void setup_task(CLI::App& app);
void setup_merge(CLI::App& app);
void setup_slurm(CLI::App& app);

// The check of every option that names a file or folder to write: an empty value ('') names nothing and would
// silently write nothing; refused with the fix.
inline CLI::Validator non_empty_path() {
  return CLI::Validator(
      [](std::string& v) {
        return v.empty() ? std::string("'' names no file or folder; fix: give a path (--json/-o also take - for stdout)")
                         : std::string();
      },
      "PATH");
}

}  // namespace gradflow::cli
