// inputs.hpp — the files `gradflow plot` reads: analyze reports (docs/report-schema.md), compare and sweep
// reports (docs/experiments.md: "experiment", "groups"[].per_layer / scalars with {mean, std, n}), and
// Jacobians written by `gradflow jacobian` (.npy, float64, (n·d, n·d)).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gradflow {

using PlotJson = nlohmann::ordered_json;

// Train: a train or train-sweep report (docs/training.md); OverTraining: the report of analyze --weights A B ... over a
// run's checkpoints (commands/analyze_over_training.hpp)
enum class InputKind { Analyze, Experiment, Npy, Train, OverTraining, CoordCheck };

struct PlotInput {
  std::string path;
  std::string stem;  // file name without folder and extension: the fallback legend entry
  InputKind kind = InputKind::Analyze;
  PlotJson json;     // the report (empty for .npy)
};

// Loads every path; a .npy is only recorded (read by the kinds that take one). Throws Error naming the file
// when it is missing, not JSON, or neither an analyze nor a compare/sweep report.
std::vector<PlotInput> load_inputs(const std::vector<std::string>& paths);

// A placement as figures name it: the scheme's display name (Post-LN, Pre-LN, DeepNorm; model/placement.hpp), or
// the report's own word when no scheme has it.
std::string placement_label(const std::string& placement);

// One legend entry per analyze report: the placement, plus every other config field that differs between the
// reports ("post", "pre, L=12", "post, init=xavier"); the file stems when all configs are equal.
std::vector<std::string> report_labels(const std::vector<const PlotInput*>& reports);
// The parts of report_labels, one per factor: the placement, then each config field that differs ("L=12"; "-"
// where a report lacks it); report_labels joins them.
std::vector<std::vector<std::string>> report_factors(const std::vector<const PlotInput*>& reports);
// report_labels of the analyze reports among `in`, and of the single-run train reports (those with a log), in order.
std::vector<std::string> analyze_report_labels(const std::vector<PlotInput>& in);
std::vector<std::string> train_report_labels(const std::vector<PlotInput>& in);

// One legend entry per compare/sweep group: placement, then depth and swept value when they vary.
std::vector<std::string> group_labels(const PlotJson& experiment);
// Its parts: the placement, then "L=24" when depths differ, "PARAM=VALUE" when values differ, "PARAM2=VALUE2" when
// the second values of a 2-D sweep differ.
std::vector<std::vector<std::string>> group_factors(const PlotJson& experiment);

// A number at `key` of `j`; NaN when absent or not a number (matrix-free reports hold strings for unavailable
// quantities).
double json_number(const PlotJson& j, const std::string& key);
double json_number(const PlotJson& j, const std::string& key, const std::string& sub);

// A train-sweep cell's share of converged runs (converged / runs): phase-diagram's default metric there.
inline constexpr const char* kConvergedFraction = "converged_fraction";

// The scalar metrics --metric can name in `in`: a compare/sweep report's groups[].scalars, a train-sweep's cell
// numbers and kConvergedFraction; in the report's order, each once.
std::vector<std::string> metric_names(const PlotInput& in);
// The error text of a --metric that `in` lacks: how many there are, the nearest names, and `--metric list`.
std::string unknown_metric(const std::string& metric, const PlotInput& in);

// A compare/sweep statistic {mean, std, n} as (mean, std); NaNs when absent.
std::pair<double, double> json_stat(const PlotJson& j, const std::string& key);

// What a figure draws of a compare/sweep statistic: its mean and the spread around it — the 95 % confidence interval
// of the mean (ci_low, ci_high: experiments/statistics.hpp), or mean ± std for a report written before intervals
// were (2026-12-07); a positive mean's lower end clipped at a tenth of it (a log axis). NaN mean when absent; no
// spread (lo = hi = mean) where the report has none (one seed).
struct Spread {
  double mean, lo, hi;
};
Spread json_spread(const PlotJson& j, const std::string& key);
// The line every kept script with such a spread carries (before `plot`).
inline constexpr const char* kSpreadNote =
    "# bars/bands: the 95 % confidence interval of the mean over seeds (Student t; mean ± std in older reports)\n";

}  // namespace gradflow
