// statistics.hpp — what a multi-seed report says about the distribution behind its seeds (docs/experiments.md,
// "Statistics"): the standard error and a confidence interval of the mean, the median, and for positive quantities the
// geometric mean with its interval; for two groups that share seeds, the paired comparison and its verdict.
//
// Intervals are Student t intervals at a two-sided level (0.95 by default): mean ± t_{(1+level)/2, n−1}·sd/√n. The
// geometric one is the same interval on ln x, mapped back by exp: exp(mean ln x ± t·sd(ln x)/√n), an interval of
// exp(E ln x) (the median of a log-normal), the right summary of a ratio or a norm that spans decades. Both are exact
// for Gaussian (log-Gaussian) data and approximate otherwise; the level is per interval (no family-wise correction).
//
// A paired comparison of A and B over the seeds they share (the same seed gives both the same input and cotangent):
// when every value of both is positive, the per-seed ratios A_s/B_s and the geometric interval of those ratios; else
// the per-seed differences A_s − B_s and the t interval of their mean. The verdict at the level: "greater" when the
// interval lies above 1 (above 0 for differences), "less" when below, "equal" when every pair is identical, else
// "undetermined". A verdict needs n ≥ 2.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gradflow {

inline constexpr double kDefaultLevel = 0.95;

// Student t's quantile: the t with P(T ≤ t) = p for df degrees of freedom (df > 0, 0 < p < 1).
double student_t_quantile(double p, double df);
// Student t's distribution function P(T ≤ t).
double student_t_cdf(double t, double df);

// The standard normal quantile.
double normal_quantile(double p);

struct Interval {
  double low, high;  // NaN when undefined (n < 2)
};

// Wilson's score interval of a proportion k/n at `level` (n ≥ 1; NaN for n = 0): the divergence rate of a grid cell.
Interval proportion_interval(int k, int n, double level = kDefaultLevel);

// The t interval of the mean of `v` at `level` (two-sided).
Interval mean_interval(const std::vector<double>& v, double level = kDefaultLevel);
// exp of the t interval of mean(ln v); every value must be positive (else NaN).
Interval geometric_interval(const std::vector<double>& v, double level = kDefaultLevel);
double median(std::vector<double> v);                  // NaN when empty
// The independent-samples (Welch) interval of the ratio of geometric means of a and b: exp of Welch's interval of
// mean(ln a) − mean(ln b). What a comparison that ignored the pairing would give (tests, docs/experiments.md).
Interval unpaired_ratio_interval(const std::vector<double>& a, const std::vector<double>& b,
                                 double level = kDefaultLevel);

// The summary of one quantity over seeds, as a report writes it:
//   {"mean", "std", "n", "se", "ci_low", "ci_high", "median"} and, when every value is positive,
//   {"geomean", "geo_ci_low", "geo_ci_high"}; undefined numbers (n < 2) are null.
// mean and std are mean_std's (aggregate.hpp), so the keys reports had keep their bits.
nlohmann::ordered_json summary_json(const std::vector<double>& values, double level = kDefaultLevel);

struct Paired {
  int n = 0;
  bool ratio = false;      // compared by ratios (every value positive), else by differences
  double estimate = 0;     // the geometric mean of the ratios, or the mean difference
  Interval interval{0, 0};
  double fraction_greater = 0;  // the fraction of seeds with A_s > B_s
  std::string verdict;     // "greater" | "less" | "equal" | "undetermined"
};

// a[i] and b[i] are the same seed's values (same length).
Paired compare_paired(const std::vector<double>& a, const std::vector<double>& b, double level = kDefaultLevel);
// {"by": "ratio"|"difference", "estimate", "ci_low", "ci_high", "fraction_greater"} (a report puts p.verdict beside
// it, as the metric's "verdict")
nlohmann::ordered_json paired_json(const Paired& p);

// The report's statement of its statistics: {"interval": "Student t", "level": level, "paired": ..., "geometric": ...}.
nlohmann::ordered_json statistics_note(double level = kDefaultLevel);

}  // namespace gradflow
