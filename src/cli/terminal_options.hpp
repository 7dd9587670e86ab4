// terminal_options.hpp — the flags that choose how a table looks on stdout (report/terminal.hpp), the same for
// analyze, compare, sweep, train-sweep, run and merge: `--bars` (bars also into a file or pipe; by default only on a
// terminal), `--no-bars`, `--narrow` (at most 80 characters a line, for a projector). They change what is printed,
// never the report: a spec does not record them.
#pragma once
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "gradflow/report/terminal.hpp"

namespace gradflow::cli {

struct TerminalOptions {
  int bars = 0;  // 0: on a terminal; 1: --bars; -1: --no-bars
  bool narrow = false;

  TerminalStyle style() const { return {bars > 0 || (bars == 0 && ::isatty(STDOUT_FILENO)), narrow}; }
  bool forced() const { return bars > 0; }
};

inline void add_terminal_options(CLI::App& sub, TerminalOptions& o) {
  sub.add_flag_callback("--bars", [&o] { o.bars = 1; },
                        "log-scale bars of ||dL/dx_l|| beside the table, also into a file or pipe (default: on a "
                        "terminal only)");
  sub.add_flag_callback("--no-bars", [&o] { o.bars = -1; }, "no bars, not even on a terminal");
  sub.add_flag("--narrow", o.narrow, "a table of at most 80 characters a line (fewer columns, shorter bars)");
}

}  // namespace gradflow::cli
