// cmd_sweep.cpp — `gradflow sweep --placement post --layers 24 --param init-scale --values 1,0.5,inv-sqrt-2L --seeds K`:
// how every summary metric moves with one model option (any model flag: init-scale, layers, d-model,
// residual-scale, seq-len, init, ...), with mean ± std over seeds, power-law exponents along numeric values,
// and ratios between placements when --placement lists several. `--param2 B --values2 ...` adds a second option:
// every value of --param with every value of --param2 (a phase diagram; `gradflow plot --kind phase-diagram`).
#include <cmath>

#include "cli/commands.hpp"
#include "cli/experiment_options.hpp"
#include "gradflow/core/error.hpp"

namespace gradflow::cli {
namespace {

struct SweepOptions {
  ExperimentOptions exp;
  std::string param, values, param2, values2;
};

void run_sweep(const CLI::App& sub, const SweepOptions& o) {
  PlanAxes axes;
  axes.placements = split_list(o.exp.model.rc.model.placement, "--placement");
  axes.depths = {o.exp.model.rc.model.layers};
  axes.param = o.param;
  axes.values = split_list(o.values, "--values");
  if (!o.param2.empty()) {
    require(o.param2 != o.param, "--param2 " + o.param2 + " is --param too; fix: sweep two different options (e.g. "
                                 "--param init-scale --param2 layers), or list every value in --values");
    axes.param2 = o.param2;
    axes.values2 = split_list(o.values2, "--values2");
  }
  ExperimentOptions exp = o.exp;  // --weights: the checkpoint's block unless --placement says
  axes_from_checkpoint(exp, axes, "--placement", exp.model.given.count("placement") > 0,
                       exp.model.given.count("layers") > 0);
  run_experiment_command(sub, "sweep", axes, exp);
}

}  // namespace

void setup_sweep(CLI::App& app) {
  auto opts = std::make_shared<SweepOptions>();
  auto* sub = app.add_subcommand("sweep", "sensitivity of the metrics to one option, with seed error bars");
  add_experiment_options(*sub, opts->exp);
  sub->get_option("--placement")->description("placement, or several comma-separated (ratios between them)");
  std::vector<std::string> sweepable;
  for (const ModelOption& m : model_options())
    if (m.name != "placement" && m.name != "seed" && m.name != "max-memory") sweepable.push_back(m.name);
  sub->add_option("--param", opts->param, "the model option to vary: init-scale | layers | d-model | residual-scale | "
                                          "seq-len | init | any model flag")
      ->required()
      ->check(CLI::IsMember(sweepable));
  sub->add_option("--values", opts->values, "comma-separated values, e.g. 1,0.5,inv-sqrt-2L")->required();
  auto* param2 = sub->add_option("--param2", opts->param2,
                                 "a second model option to vary: every --values with every --values2 (a 2-D sweep)")
                     ->check(CLI::IsMember(sweepable));
  auto* values2 = sub->add_option("--values2", opts->values2, "comma-separated values of --param2, e.g. 0.25,0.5,1,2");
  param2->needs(values2);
  values2->needs(param2);
  sub->callback([sub, opts] { run_sweep(*sub, *opts); });
}

}  // namespace gradflow::cli
