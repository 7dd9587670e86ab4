// decimal_options.hpp — every numeric option of a CLI::App and its subcommands read as a decimal number
// (core/decimal.hpp): CLI11 itself reads 0x10 as 16 and 010 as 8. Called on each App gradflow parses with (the
// command line's, a spec's, a plan's and the Python module's).
#pragma once
#include <CLI/CLI.hpp>

namespace gradflow {

// Adds to every option of `app` and of its subcommands (recursively) whose values are numbers (CLI11's INT, UINT
// and FLOAT) a check that refuses anything but a decimal number, and reads an integer's leading zeros as decimal.
void decimal_numbers_only(CLI::App& app);

}  // namespace gradflow
