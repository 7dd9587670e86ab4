// run_experiment.cpp — see run_experiment.hpp.
#include "gradflow/experiments/run_experiment.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "gradflow/run/engine.hpp"
#include "gradflow/run/run_inputs.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/experiments/experiment.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/experiments/spec.hpp"
#include "linalg/blas_kernel.hpp"

namespace gradflow {
namespace {

// The swept value as a number: --init-scale's resolved multiplier, else the value itself when it is one (NaN when not).
double numeric_value(const std::string& param, const std::string& value, const RunConfig& rc) {
  if (param == "init-scale") return rc.init.scale;
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  return end && *end == '\0' && end != value.c_str() ? v : std::nan("");
}

}  // namespace

RunConfig resolve_point(const ExperimentSettings& e, const std::string& placement, Index depth, const std::string& value,
                        const std::string& value2) {
  const bool compare = e.kind == "compare";
  ModelSettings s = e.model;
  std::vector<std::pair<std::string, std::string>> overrides = {
      {"placement", placement}, compare ? std::pair<std::string, std::string>{"layers", std::to_string(depth)}
                                        : std::pair<std::string, std::string>{e.axes.param, value}};
  if (!compare && !e.axes.param2.empty()) overrides.emplace_back(e.axes.param2, value2);
  for (const auto& [name, v] : overrides) {
    try {
      set_model_option(s, name, v);
    } catch (const Error& err) {
      throw Error("the point --" + name + " " + v + " is not a valid model: " + err.what());
    }
  }
  RunConfig rc = resolve(s);
  rc.analysis.engine_request = parse_engine_request("auto", e.gradients_only);
  rc.analysis.backend = e.backend;
  rc.analysis.progress = false;
  return rc;
}

nlohmann::ordered_json run_experiment(ExperimentSettings e) {
  if (e.auto_seeds.enabled) {  // refused before any file is read
    check_auto_seeds(e.auto_seeds);
    require(e.runner.plan.kind == PlanStep::Kind::None,
            "--seeds auto decides after each batch how many seeds to run, which a plan's fixed task list cannot; fix: "
            "run it in one process (with --resume DIR to keep finished seeds), or give --seeds N to a plan");
    e.axes.seeds = e.auto_seeds.batch;
  }
  e.model.rc.files = load_run_files(e.model.rc);  // --weights/--input/--cotangent read once for every point
  e.model.run_placements = e.axes.placements;      // a placement's own option must apply to one of them
  const MakePoint make = [&](const std::string& placement, Index depth, const std::string& value,
                             const std::string& value2) {
    PointConfig p;
    p.rc = resolve_point(e, placement, depth, value, value2);
    p.x = e.kind == "compare" ? static_cast<double>(depth) : numeric_value(e.axes.param, value, p.rc);
    p.x2 = e.axes.param2.empty() ? 0.0 : numeric_value(e.axes.param2, value2, p.rc);
    return p;
  };
  std::vector<Configuration> configs = plan_configurations(e.axes, make);
  // refuses what does not fit, up front (each configuration's own run builds its own backend)
  const RunBackend backend(e.backend);
  for (const auto& c : configs) choose_engine(c.rc.model, c.rc.analysis, backend);
  if (e.backend != BackendKind::Cpu) {
    // one configuration at a time on the device (each holds its products there), the host's part of it on every
    // thread; a run that computes needs the device before the first configuration starts (not the step that only
    // writes a plan, on a login node, nor a plan's task: its configurations fail one by one, each writing
    // failed/NAME.txt for merge and slurm to report)
    e.runner.one_at_a_time = true;
    e.runner.kernel = std::string(to_string(e.backend)) + " (host: " + blas_kernel() + ")";
    if (e.runner.plan.kind == PlanStep::Kind::None)
      (void)backend.get();  // Error with the fix when it was not built or no GPU is visible
  }
  if (e.runner.progress)
    std::fprintf(stderr, "gradflow %s: %zu configurations x %d seeds = %zu runs%s\n", e.kind.c_str(),
                 configs.size() / static_cast<size_t>(std::max(e.axes.seeds, 1)), e.axes.seeds, configs.size(),
                 e.auto_seeds.enabled ? " (--seeds auto: the first batch)" : "");
  RunnerStats stats;
  auto reports = run_configurations(configs, e.runner, &stats);
  if (e.runner.plan.kind == PlanStep::Kind::Write || e.runner.plan.kind == PlanStep::Kind::Task) return {};
  ExperimentInfo info;
  info.kind = e.kind;
  info.axes = e.axes;
  info.spec = e.spec;
  int batches = 1;
  std::vector<std::string> unmet;
  if (e.auto_seeds.enabled) {
    // batches of seeds until every interval is narrow enough: the configurations of the seeds already run are kept
    // (plan order is group-major with repetitions innermost, so a larger --seeds keeps every earlier one)
    // The rule reads scalar metrics only (summary.*, top-level numbers, bottom.* and top.*: the first and last layer),
    // so it is decided on reports cut to those two layers: the same scalars, without aggregating every layer of
    // every seed after each batch. Verdicts are not decided there (the rule never reads them).
    const auto light = [](const nlohmann::ordered_json& r) {
      nlohmann::ordered_json c = r;
      if (c.contains(fields::kLayers) && c[fields::kLayers].is_array() && c[fields::kLayers].size() > 2) {
        nlohmann::ordered_json ends = nlohmann::ordered_json::array();
        ends.push_back(c[fields::kLayers].front());
        ends.push_back(c[fields::kLayers].back());
        c[fields::kLayers] = std::move(ends);
      }
      return c;
    };
    ExperimentInfo rule_info = info;
    if (rule_info.spec.is_object()) rule_info.spec.erase("verdicts");
    std::vector<nlohmann::ordered_json> light_reports;
    for (const auto& r : reports) light_reports.push_back(light(r));
    for (;;) {
      unmet = auto_seeds_unmet(experiment_report(rule_info, configs, light_reports), e.auto_seeds);
      if (unmet.empty() || e.axes.seeds >= e.auto_seeds.max_seeds) break;
      const int had = e.axes.seeds;
      e.axes.seeds = std::min(had + e.auto_seeds.batch, e.auto_seeds.max_seeds);
      info.axes.seeds = e.axes.seeds;
      rule_info.axes.seeds = e.axes.seeds;
      if (e.runner.progress)
        std::fprintf(stderr, "gradflow %s: --seeds auto: %zu intervals wider than the target at %d seeds (e.g. %s); "
                     "seeds %d..%d next\n", e.kind.c_str(), unmet.size(), had, unmet.front().c_str(), had,
                     e.axes.seeds - 1);
      std::vector<Configuration> all = plan_configurations(e.axes, make), fresh;
      for (const auto& c : all)
        if (c.repetition >= had) fresh.push_back(c);
      for (const auto& c : fresh) choose_engine(c.rc.model, c.rc.analysis, backend);
      RunnerStats more;
      auto fresh_reports = run_configurations(fresh, e.runner, &more);
      for (const auto& k : more.kernels)
        if (std::find(stats.kernels.begin(), stats.kernels.end(), k) == stats.kernels.end()) stats.kernels.push_back(k);
      std::vector<nlohmann::ordered_json> merged, merged_light;
      size_t old_i = 0, new_i = 0;
      for (const auto& c : all) {
        if (c.repetition < had) {
          merged_light.push_back(std::move(light_reports[old_i]));
          merged.push_back(std::move(reports[old_i++]));
        } else {
          merged_light.push_back(light(fresh_reports[new_i]));
          merged.push_back(std::move(fresh_reports[new_i++]));
        }
      }
      configs = std::move(all);
      reports = std::move(merged);
      light_reports = std::move(merged_light);
      ++batches;
    }
  }
  std::vector<Configuration> present = configs;  // a partial merge: the configurations that have a result
  if (!stats.partial.is_null()) {
    present.clear();
    std::vector<nlohmann::ordered_json> kept;
    for (size_t i = 0; i < configs.size(); ++i)
      if (!reports[i].is_null()) present.push_back(configs[i]), kept.push_back(std::move(reports[i]));
    reports = std::move(kept);
  }
  nlohmann::ordered_json report = experiment_report(info, present, reports);
  if (e.auto_seeds.enabled) report[fields::kSeeds]["auto"] = auto_seeds_json(e.auto_seeds, batches, unmet);
  if (!stats.partial.is_null()) report["partial"] = stats.partial;
  report["blas_kernel"] = kernels_json(stats.kernels);
  if (!e.spec_file.empty()) {  // the spec as the file gave it (a report's own spec when the file is a report, so
                              // rerunning a report does not nest the previous report inside the new one)
    const nlohmann::ordered_json file_spec = load_spec(e.spec_file);
    for (const char* key : {"claim", "description", "plot"})  // what the figure of a claim reads (plot --kind claims)
      if (file_spec.contains(key)) report["spec"][key] = file_spec[key];
    report["spec_file"] = nlohmann::ordered_json{{"path", e.spec_file}, {"content", file_spec}};
  }
  return report;
}

}  // namespace gradflow
