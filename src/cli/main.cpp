// main.cpp — the gradflow command line: registers the subcommands and maps errors to exit codes
// (2: bad input or options, 3: numerical failure, 4: internal error). Nothing else lives here.
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "cli/option_suggestion.hpp"
#include "process/interrupt.hpp"
#include "process/runtime_env.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/report/decimal_options.hpp"

namespace {

// An error is one line of readable length: newlines become spaces, and a message swollen by an echoed value (a
// 100 KB option) keeps its head and its tail, where the fix is.
std::string one_line(std::string msg) {
  for (char& c : msg)
    if (c == '\n' || c == '\r') c = ' ';
  constexpr size_t kMax = 600, kHead = 300, kTail = 250;
  if (msg.size() > kMax)
    msg = msg.substr(0, kHead) + " [... " + std::to_string(msg.size() - kHead - kTail) + " characters ...] " +
          msg.substr(msg.size() - kTail);
  return msg;
}

}  // namespace

int main(int argc, char** argv) {
  gradflow::process::tune_runtime_environment(argv);  // may run gradflow again with OpenMP/OpenBLAS settings
  gradflow::process::install_interrupt_handler();     // Ctrl-C: one line on what was kept and how to continue
  // a file size limit (ulimit -f) is a write error (EFBIG: the output's temporary file removed, exit 2), not death by
  // SIGXFSZ with a temporary file left behind
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"gradflow: exact gradient flow through a double-precision Transformer"};
  app.require_subcommand(1);
  app.set_version_flag("--version", GRADFLOW_VERSION);
  gradflow::cli::setup_analyze(app);
  gradflow::cli::setup_jacobian(app);
  gradflow::cli::setup_export(app);
  gradflow::cli::setup_placements(app);
  gradflow::cli::setup_compare(app);
  gradflow::cli::setup_sweep(app);
  gradflow::cli::setup_run(app);
  gradflow::cli::setup_plot(app);
  gradflow::cli::setup_train(app);
  gradflow::cli::setup_coord_check(app);
  gradflow::cli::setup_train_sweep(app);
  gradflow::cli::setup_task(app);
  gradflow::cli::setup_merge(app);
  gradflow::cli::setup_slurm(app);
  gradflow::decimal_numbers_only(app);  // 0x10 and 010 are not read as 16 and 8
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // (an open progress line was ended by its destructor while the exception left its scope)
    const std::string msg = e.what(), suggestion = gradflow::cli::option_suggestion(app, argc, argv);
    std::cerr << "gradflow: error: " << one_line(msg.find("fix:") != std::string::npos ? msg : msg + "; fix: " +
                 (suggestion.empty() ? "" : suggestion + " (") + "see `gradflow " + (argc > 1 ? argv[1] : "") +
                 " --help`" + (suggestion.empty() ? "" : ")")) << "\n";
    return 2;
  } catch (const gradflow::Error& e) {
    std::cerr << "gradflow: error: " << one_line(e.what()) << "\n";
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    std::cerr << "gradflow: error: out of memory; fix: lower --seq-len/--d-model/--layers (the estimates of "
                 "--max-memory missed this allocation: please report it) or use a bigger machine\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "gradflow: internal error: " << one_line(e.what()) << "\n";
    return 4;
  }
  return 0;
}
