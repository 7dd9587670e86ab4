// statistics.cpp — see statistics.hpp.
#include "gradflow/experiments/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gradflow/core/error.hpp"
#include "gradflow/experiments/aggregate.hpp"
#include "gradflow/report/fields.hpp"

namespace gradflow {
using Json = nlohmann::ordered_json;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// The continued fraction of the regularized incomplete beta function I_x(a, b) (modified Lentz's method; converges
// fast for x < (a + 1)/(a + b + 2), the caller uses the symmetry I_x(a, b) = 1 − I_{1−x}(b, a) otherwise).
double beta_fraction(double a, double b, double x) {
  const double tiny = 1e-300, eps = 1e-16;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::abs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 10000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::abs(c) < tiny) c = tiny;
    d = 1 / d;
    const double step = d * c;
    h *= step;
    if (std::abs(step - 1) < eps) break;
  }
  return h;
}

// I_x(a, b), 0 ≤ x ≤ 1.
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

void check_level(double level) {
  require(level > 0 && level < 1, "a confidence level must lie strictly between 0 and 1 (got " +
                                      std::to_string(level) + "); fix: e.g. 0.95");
}

// The half-width factor t_{(1+level)/2, n−1}/√n of a t interval over n values (NaN for n < 2).
double t_factor(size_t n, double level) {
  if (n < 2) return kNaN;
  return student_t_quantile(0.5 * (1 + level), static_cast<double>(n - 1)) / std::sqrt(static_cast<double>(n));
}

bool all_positive(const std::vector<double>& v) {
  return !v.empty() && std::all_of(v.begin(), v.end(), [](double x) { return x > 0 && std::isfinite(x); });
}

std::vector<double> logs(const std::vector<double>& v) {
  std::vector<double> l(v.size());
  std::transform(v.begin(), v.end(), l.begin(), [](double x) { return std::log(x); });
  return l;
}

Json number_or_null(double x) { return std::isfinite(x) ? Json(x) : Json(); }

// The t interval mean ± t_{(1+level)/2, n−1}·sd/√n of a mean_std result (NaN ends for n < 2): what mean_interval,
// geometric_interval (on ln x) and summary_json compute, from one Stat each.
Interval t_interval(const Stat& s, double level) {
  const double f = t_factor(static_cast<size_t>(s.n), level);
  return {s.mean - f * s.std, s.mean + f * s.std};
}

}  // namespace

double student_t_cdf(double t, double df) {
  if (!(df > 0)) throw Error("internal: Student t with df <= 0", ErrorKind::Internal);
  if (std::isnan(t)) return kNaN;
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  const double tail = 0.5 * incomplete_beta(0.5 * df, 0.5, df / (df + t * t));  // P(T > |t|)
  return t > 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1 && df > 0))
    throw Error("internal: Student t quantile outside (0, 1) or df <= 0", ErrorKind::Internal);
  if (p == 0.5) return 0;
  if (p < 0.5) return -student_t_quantile(1 - p, df);
  double lo = 0, hi = 1;
  while (student_t_cdf(hi, df) < p) {
    lo = hi;
    hi *= 2;
  }
  for (int i = 0; i < 200 && hi - lo > 4 * std::numeric_limits<double>::epsilon() * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) throw Error("internal: normal quantile outside (0, 1)", ErrorKind::Internal);
  if (p < 0.5) return -normal_quantile(1 - p);
  double lo = 0, hi = 1;
  const auto cdf = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  while (cdf(hi) < p) {
    lo = hi;
    hi *= 2;
  }
  for (int i = 0; i < 200 && hi - lo > 4 * std::numeric_limits<double>::epsilon() * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (cdf(mid) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

Interval proportion_interval(int k, int n, double level) {
  check_level(level);
  if (n <= 0) return {kNaN, kNaN};
  const double z = normal_quantile(0.5 * (1 + level)), z2 = z * z, nn = n, kk = k;
  const double center = (kk + 0.5 * z2) / (nn + z2);
  const double half = z / (nn + z2) * std::sqrt(kk * (nn - kk) / nn + 0.25 * z2);
  return {std::max(0.0, center - half), std::min(1.0, center + half)};
}

Interval mean_interval(const std::vector<double>& v, double level) {
  check_level(level);
  return t_interval(mean_std(v), level);
}

Interval geometric_interval(const std::vector<double>& v, double level) {
  check_level(level);
  if (!all_positive(v)) return {kNaN, kNaN};
  const Interval l = t_interval(mean_std(logs(v)), level);
  return {std::exp(l.low), std::exp(l.high)};
}

double median(std::vector<double> v) {
  if (v.empty()) return kNaN;
  const size_t h = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(h), v.end());
  if (v.size() % 2 == 1) return v[h];
  const double upper = v[h];
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(h));
  return lower + 0.5 * (upper - lower);
}

Interval unpaired_ratio_interval(const std::vector<double>& a, const std::vector<double>& b, double level) {
  check_level(level);
  if (!all_positive(a) || !all_positive(b) || a.size() < 2 || b.size() < 2) return {kNaN, kNaN};
  const Stat sa = mean_std(logs(a)), sb = mean_std(logs(b));
  const double va = sa.std * sa.std / sa.n, vb = sb.std * sb.std / sb.n, se2 = va + vb;
  const double df = se2 * se2 / (va * va / (sa.n - 1) + vb * vb / (sb.n - 1));  // Welch–Satterthwaite
  const double diff = sa.mean - sb.mean;
  if (!(se2 > 0)) return {std::exp(diff), std::exp(diff)};
  const double half = student_t_quantile(0.5 * (1 + level), df) * std::sqrt(se2);
  return {std::exp(diff - half), std::exp(diff + half)};
}

Json summary_json(const std::vector<double>& values, double level) {
  check_level(level);
  const Stat s = mean_std(values);
  Json j = stat_json(s);
  const Interval ci = t_interval(s, level);
  j["se"] = number_or_null(s.n > 1 ? s.std / std::sqrt(static_cast<double>(s.n)) : kNaN);
  j["ci_low"] = number_or_null(ci.low);
  j["ci_high"] = number_or_null(ci.high);
  j["median"] = number_or_null(median(values));
  if (all_positive(values)) {
    const Stat l = mean_std(logs(values));
    const Interval g = t_interval(l, level);
    j["geomean"] = std::exp(l.mean);
    j["geo_ci_low"] = number_or_null(std::exp(g.low));
    j["geo_ci_high"] = number_or_null(std::exp(g.high));
  }
  return j;
}

Paired compare_paired(const std::vector<double>& a, const std::vector<double>& b, double level) {
  check_level(level);
  if (a.size() != b.size())
    throw Error("internal: a paired comparison of lists of different lengths", ErrorKind::Internal);
  Paired p;
  p.n = static_cast<int>(a.size());
  p.ratio = all_positive(a) && all_positive(b);
  std::vector<double> d(a.size());
  int greater = 0;
  bool identical = true;
  for (size_t i = 0; i < a.size(); ++i) {
    d[i] = p.ratio ? std::log(a[i]) - std::log(b[i]) : a[i] - b[i];
    greater += a[i] > b[i];
    identical = identical && a[i] == b[i];
  }
  p.fraction_greater = a.empty() ? kNaN : static_cast<double>(greater) / static_cast<double>(a.size());
  const Stat s = mean_std(d);  // (n = 0: mean NaN)
  const Interval i = t_interval(s, level);
  const double m = s.mean;
  p.estimate = p.ratio ? std::exp(m) : m;
  p.interval = p.ratio ? Interval{std::exp(i.low), std::exp(i.high)} : i;
  const double one = p.ratio ? 1.0 : 0.0;
  if (identical && !a.empty()) p.verdict = "equal";
  else if (p.interval.low > one) p.verdict = "greater";
  else if (p.interval.high < one) p.verdict = "less";
  else p.verdict = "undetermined";  // the interval holds both directions, or n < 2, or a non-finite value
  return p;
}

Json paired_json(const Paired& p) {
  return Json{{"by", p.ratio ? "ratio" : "difference"},
              {"estimate", number_or_null(p.estimate)},
              {"ci_low", number_or_null(p.interval.low)},
              {"ci_high", number_or_null(p.interval.high)},
              {"fraction_greater", number_or_null(p.fraction_greater)}};
}

Json statistics_note(double level) {
  return Json{{"level", level},
              {"interval", "Student t, two-sided: mean ± t·sd/√n (ci_low, ci_high)"},
              {"geometric", "positive quantities: exp of the t interval of mean(ln x) (geomean, geo_ci_low, geo_ci_high)"},
              {"paired", "groups that share seeds: the per-seed ratios' geometric mean and interval when every value is "
                         "positive, else the per-seed differences'; verdict greater/less when the interval excludes "
                         "1 (0), equal when every pair is identical, else undetermined; the level is per comparison"}};
}

}  // namespace gradflow
