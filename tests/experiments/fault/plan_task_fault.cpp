// plan_task_fault.cpp — the tests' `gradflow task` with a fault: `plan_task_fault FAULTS DIR IDS [-q]` runs tasks
// IDS of the plan in DIR as `gradflow task DIR IDS` does (the library's run_plan_step, every core), except that
// the tasks FAULTS ("3", "1,4") fail on purpose ("injected fault", PlanStep::inject_fault). It is how
// test_plan_cli.sh and tests/cluster/test_slurm.sh (through a wrapper given to `gradflow slurm --gradflow`) make a
// task fail; the command line itself has no way to. Errors and exit codes as gradflow's (2, 3, 4).
#include <iostream>
#include <string>

#include "gradflow/core/error.hpp"
#include "gradflow/commands/experiment_command.hpp"
#include "gradflow/experiments/plan.hpp"
#include "process/runtime_env.hpp"

int main(int argc, char** argv) {
  gradflow::process::tune_runtime_environment(argv);  // the settings gradflow runs under, so the results are its own
  const std::string quiet = argc == 5 ? argv[4] : "";
  if ((argc != 4 && argc != 5) || (argc == 5 && quiet != "-q")) {
    std::cerr << "usage: plan_task_fault FAULTS DIR IDS [-q]\n";
    return 2;
  }
  try {
    gradflow::SpecRun how;
    how.plan.kind = gradflow::PlanStep::Kind::Task;
    how.plan.dir = argv[2];
    how.plan.task_ids = argv[3];
    for (const std::string& id : gradflow::split_list(argv[1], "FAULTS")) how.plan.inject_fault.push_back(std::stoi(id));
    how.threads = 0;
    how.quiet = !quiet.empty();
    gradflow::run_plan_step(how);
  } catch (const gradflow::Error& e) {
    std::cerr << "gradflow: error: " << e.what() << "\n";
    return e.exit_code();
  }
  return 0;
}
