// experiment_run.hpp — how the commands that run an experiment (compare, sweep, train-sweep, run, task, merge) hand
// it to the library (commands/experiment_command.hpp) and its outcome out.
#pragma once
#include <iostream>

#include "gradflow/commands/experiment_command.hpp"
#include "process/interrupt.hpp"

namespace gradflow::cli {

// A SpecRun whose notes reach the program's Ctrl-C handler (what was kept, how to continue).
inline SpecRun command_line_run() {
  SpecRun how;
  how.interrupt_note = process::set_interrupt_note;
  return how;
}

// The report (none after writing a plan or running tasks): the table on stdout unless quiet, --json and --csv.
inline void hand_out(const SpecOutcome& out) {
  if (!out.report.is_null()) write_report(out.report, out.writers, out.files, std::cout);
}

}  // namespace gradflow::cli
