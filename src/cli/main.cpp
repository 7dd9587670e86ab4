// main.cpp — the gradflow command line: registers the subcommands and maps errors to exit codes
// (2: bad input or options, 3: numerical failure, 4: internal error). Nothing else lives here.
#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "process/runtime_env.hpp"
#include "gradflow/core/error.hpp"

int main(int argc, char** argv) {
  gradflow::process::tune_runtime_environment(argv);  // may run gradflow again with OpenMP/OpenBLAS settings
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
  gradflow::cli::setup_train_sweep(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "gradflow: error: " << e.what() << "; fix: see `gradflow " << (argc > 1 ? argv[1] : "") << " --help`\n";
    return 2;
  } catch (const gradflow::Error& e) {
    std::cerr << "\ngradflow: error: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    std::cerr << "\ngradflow: error: out of memory; fix: lower --seq-len/--d-model or use a bigger machine\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "\ngradflow: internal error: " << e.what() << "\n";
    return 4;
  }
  return 0;
}
