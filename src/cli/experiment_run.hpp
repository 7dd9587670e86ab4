// experiment_run.hpp — how the commands that run an experiment (compare, sweep, train-sweep, run, task, merge) hand
// it to the library (commands/experiment_command.hpp) and its outcome out.
#pragma once
#include <iostream>
#include <sstream>

#include "cli/terminal_options.hpp"
#include "gradflow/commands/analyze_plan.hpp"
#include "gradflow/commands/experiment_command.hpp"
#include "gradflow/experiments/experiment.hpp"
#include "gradflow/experiments/experiment_terminal.hpp"
#include "gradflow/report/table.hpp"
#include "process/interrupt.hpp"

namespace gradflow::cli {

// A SpecRun whose notes reach the program's Ctrl-C handler (what was kept, how to continue).
inline SpecRun command_line_run() {
  SpecRun how;
  how.interrupt_note = process::set_interrupt_note;
  return how;
}

// The report (none after writing a plan or running tasks): the table on stdout unless quiet (a compare/sweep's in
// the terminal's style, with its bars; a merged analyze plan's as analyze prints it), --json and --csv.
inline void hand_out(const SpecOutcome& out, const TerminalOptions& terminal) {
  if (out.report.is_null()) return;
  ReportFiles files = out.files;
  if (files.table && out.writers.table == kExperimentWriters.table) {
    const TerminalStyle style = terminal.style();
    print_experiment_table(std::cout, out.report, style);
    if (style.bars) print_experiment_bars(std::cout, out.report, style, terminal.forced());
    files.table = false;
  } else if (files.table && out.writers.table == kAnalyzeWriters.table) {  // a merged analyze plan: analyze's table
    const TerminalStyle style = terminal.style();
    print_report_table(std::cout, out.report, style.bars, style.narrow);
    files.table = false;
  } else if (files.table && terminal.narrow) {  // a train-sweep's table: its lines wrapped at 80 characters
    std::ostringstream table;
    out.writers.table(table, out.report);
    std::cout << wrap_lines(table.str(), kNarrowColumns);
    files.table = false;
  }
  write_report(out.report, out.writers, files, std::cout);
}

}  // namespace gradflow::cli
