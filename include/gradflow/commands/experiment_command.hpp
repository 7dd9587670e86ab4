// experiment_command.hpp — compare, sweep and train-sweep as library calls. A command's options are registered on a
// CLI::App once, here, for both of its sources: the command line (`gradflow compare ...` parses argv into them) and
// a spec, whose "options" are the same flags without their dashes (spec.hpp), parsed by the very same table
// (run_spec). What the parse gives runs with a SpecRun: how it runs (outputs, threads, a plan step), never part of
// the spec a report or a plan records. `gradflow run SPEC`, `gradflow task` and `gradflow merge` hand a spec (a
// plan's is in its manifest, plan_dir.hpp) and a SpecRun to run_spec / run_plan_step, and so run the experiment
// exactly as its own command does.
#pragma once
#include <functional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "gradflow/experiments/plan_dir.hpp"
#include "gradflow/experiments/report_files.hpp"

namespace gradflow {

// How an experiment runs, over its options: each field set here replaces the option's value ("" / -1 / false: the
// options' own).
struct SpecRun {
  std::string json, csv, resume;  // --json, --csv, --resume
  int threads = -1;               // --threads (0: every core)
  bool quiet = false;             // -q
  std::string spec_file;          // `gradflow run SPEC`: the file, recorded in the report with its content
  PlanStep plan;                  // Write (as --plan DIR), or Task / Merge of the plan in plan.dir; None: run it
  nlohmann::ordered_json verdicts;  // a spec's "verdicts" (claim_verdicts.hpp): recorded in the report's spec (and a
                                    // plan's), decided on its report; null: none
  // Told, before anything long runs, what an interruption would leave behind and how to continue (the program's
  // Ctrl-C handler); may be empty.
  std::function<void(const std::string&)> interrupt_note;
};

// What an experiment hands out: its report and where it goes (report_files.hpp: write_report).
struct SpecOutcome {
  nlohmann::ordered_json report;  // null after writing a plan or running tasks of one
  ReportWriters writers{};        // its table and CSV
  ReportFiles files;              // --json, --csv, and the table unless quiet
};

using ExperimentRun = std::function<SpecOutcome(const SpecRun&)>;

// Registers the options of `command` ("compare" | "sweep" | "train-sweep") on `sub`, and returns what runs them once
// `sub` has parsed: it reads `sub` itself (which options were given: they are the spec the report records), so `sub`
// must outlive it. Errors (gradflow::Error) name the option and the fix.
ExperimentRun add_experiment_command(CLI::App& sub, const std::string& command);

// Runs a spec (checked: check_spec; its "reduced" not applied): its options parsed as the command's own flags,
// then run with `how`. `where` names the spec in errors ("spec 'c5.json'", "plan 'DIR'").
SpecOutcome run_spec(const nlohmann::ordered_json& spec, const std::string& where, const SpecRun& how);

// Parses a spec's options (spec_to_args: its command word first) with `app`, whose subcommands hold the commands'
// own options; a parse error becomes Error naming `where` and the fix.
void parse_spec_options(CLI::App& app, const nlohmann::ordered_json& spec, const std::string& where);

// Runs step how.plan (Task: the tasks how.plan.task_ids; Merge) of the plan in how.plan.dir: the spec its manifest
// records, with how.plan. A merge of a plan written by `gradflow run SPEC` records the spec file's content, kept
// as DIR/spec.json (the original path may not exist where the merge runs).
SpecOutcome run_plan_step(const SpecRun& how);

}  // namespace gradflow
