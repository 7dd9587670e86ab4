// cmd_merge.cpp — `gradflow merge DIR [--json F] [--csv F] [--allow-partial] [--allow-mixed-kernels] [-q]`: the report of the plan in DIR
// from its tasks' results, built by the experiment's own options and code (the library's run_plan_step) exactly as
// the single-machine run builds it (plan order, whatever order the tasks finished in). Tasks without a result are listed with the command that reruns
// each, and the merge is refused (exit 2) unless --allow-partial, which merges what is there and lists the missing
// tasks in the report under "partial" (docs/cluster.md). Results computed on different BLAS kernels (which differ in the
// last bits) are refused unless --allow-mixed-kernels; the report lists the kernels under "blas_kernel".
#include "cli/commands.hpp"
#include "cli/experiment_run.hpp"
#include "gradflow/core/error.hpp"

namespace gradflow::cli {
namespace {

struct MergeOptions {
  std::string dir, json, csv;
  bool allow_partial = false, allow_mixed_kernels = false, quiet = false;
  TerminalOptions terminal;
};

void run_merge(const MergeOptions& o) {
  SpecRun how = command_line_run();
  how.plan.kind = PlanStep::Kind::Merge;
  how.plan.dir = o.dir;
  how.plan.allow_partial = o.allow_partial;
  how.plan.allow_mixed_kernels = o.allow_mixed_kernels;
  how.json = o.json;
  how.csv = o.csv;
  how.quiet = o.quiet;
  hand_out(run_plan_step(how), o.terminal);
}

}  // namespace

void setup_merge(CLI::App& app) {
  auto opts = std::make_shared<MergeOptions>();
  auto* sub = app.add_subcommand("merge", "the report of a plan from its tasks' results (docs/cluster.md)");
  sub->add_option("dir", opts->dir, "the plan directory")->required();
  sub->add_option("--json", opts->json, "write the report here")->check(non_empty_path());
  sub->add_option("--csv", opts->csv, "write the long-format CSV here")->check(non_empty_path());
  sub->add_flag("--allow-partial", opts->allow_partial,
                "merge the tasks that have results; the report lists the missing ones under \"partial\"");
  sub->add_flag("--allow-mixed-kernels", opts->allow_mixed_kernels,
                "merge results computed on different BLAS kernels (they differ in the last bits); the report lists "
                "every kernel under \"blas_kernel\"");
  sub->add_flag("-q,--quiet", opts->quiet, "no table");
  add_terminal_options(*sub, opts->terminal);
  sub->callback([opts] { run_merge(*opts); });
}

}  // namespace gradflow::cli
