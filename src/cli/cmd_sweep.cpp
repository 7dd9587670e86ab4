// cmd_sweep.cpp — `gradflow sweep --placement post --layers 24 --param init-scale --values 1,0.5,inv-sqrt-2L --seeds K`:
// how every summary metric moves with one model option (any model flag: init-scale, layers, d-model,
// residual-scale, seq-len, init, ...), with mean ± std over seeds, power-law exponents along numeric values,
// and ratios between placements when --placement lists several.
#include <cmath>

#include "cli/commands.hpp"
#include "cli/experiment_options.hpp"
#include "gradflow/error.hpp"

namespace gradflow::cli {
namespace {

struct SweepOptions {
  ExperimentOptions exp;
  std::string param, values;
};

// The swept value as a number: --init-scale's resolved multiplier, else the value itself when it is one.
double numeric_value(const std::string& param, const std::string& value, const RunConfig& rc) {
  if (param == "init-scale") return rc.init.scale;
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  return end && *end == '\0' && end != value.c_str() ? v : std::nan("");
}

void run_sweep(const CLI::App& sub, const SweepOptions& o) {
  PlanAxes axes;
  axes.placements = split_list(o.exp.model.rc.model.placement, "--placement");
  axes.depths = {o.exp.model.rc.model.layers};
  axes.param = o.param;
  axes.values = split_list(o.values, "--values");
  axes.seeds = o.exp.seeds;
  axes.base_seed = o.exp.model.rc.init.seed;
  ExperimentOptions exp = o.exp;
  read_files_once(exp);
  const MakePoint make = [&](const std::string& placement, Index, const std::string& value) {
    PointConfig p;
    p.rc = resolve_point(exp, {{"placement", placement}, {o.param, value}});
    p.x = numeric_value(o.param, value, p.rc);
    return p;
  };
  run_experiment(sub, "sweep", axes, make, o.exp);
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
  sub->callback([sub, opts] { run_sweep(*sub, *opts); });
}

}  // namespace gradflow::cli
