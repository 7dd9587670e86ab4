// test_statistics.cpp — intervals, the geometric summary, paired comparisons and their verdicts
// (experiments/statistics.hpp).
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "gradflow/core/rng.hpp"
#include "gradflow/experiments/statistics.hpp"
#include "tolerances.hpp"

using namespace gradflow;
using Json = nlohmann::ordered_json;

namespace {
// n draws of N(mu, sigma) from the named stream of `seed`.
std::vector<double> normals(uint64_t seed, const std::string& stream, int n, double mu, double sigma) {
  Rng rng(seed, stream);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = mu + sigma * rng.normal();
  return v;
}
}  // namespace

TEST_CASE("Student t and normal quantiles match published values") {
  // t_{0.975, df} and t_{0.995, 4}, computed independently at 30 digits with mpmath (Debian's python3-mpmath:
  // findroot of 1 − I_{df/(df+t²)}(df/2, 1/2)/2 = p with mp.betainc); they agree with the printed tables (12.706,
  // 2.262, 2.023, 4.604)
  REQUIRE(student_t_quantile(0.975, 1) == Approx(12.706204736174693).epsilon(test::kQuantileTol));
  REQUIRE(student_t_quantile(0.975, 9) == Approx(2.262157162798205).epsilon(test::kQuantileTol));
  REQUIRE(student_t_quantile(0.975, 39) == Approx(2.0226909200367607).epsilon(test::kQuantileTol));
  REQUIRE(student_t_quantile(0.995, 4) == Approx(4.604094871349992).epsilon(test::kQuantileTol));
  REQUIRE(student_t_quantile(0.025, 9) == Approx(-2.262157162798205).epsilon(test::kQuantileTol));
  REQUIRE(student_t_quantile(0.5, 3) == 0.0);
  REQUIRE(normal_quantile(0.975) == Approx(1.9599639845400539).epsilon(test::kQuantileTol));  // mpmath: √2·erfinv
  // the distribution function at its quantile
  REQUIRE(student_t_cdf(student_t_quantile(0.9, 2.5), 2.5) == Approx(0.9).epsilon(test::kQuantileTol));
}

TEST_CASE("the t interval of the mean covers a Gaussian mean at its level (n = 10, 1000 seeded trials)") {
  int covered = 0;
  const int trials = 1000;
  for (int t = 0; t < trials; ++t) {
    const Interval i = mean_interval(normals(static_cast<uint64_t>(t), "coverage", 10, 3.0, 2.0));
    covered += i.low <= 3.0 && 3.0 <= i.high;
  }
  const double coverage = static_cast<double>(covered) / trials;
  INFO("coverage " << coverage);
  REQUIRE(coverage >= test::kMinCoverage95);
  REQUIRE(coverage <= 1 - (1 - 0.95) / 2);  // not wider than it should be either (~3 sd above 95 %)
}

TEST_CASE("the geometric interval covers a log-normal's exp(E ln x) at its level (n = 40, 1000 seeded trials)") {
  int covered = 0;
  const int trials = 1000;
  const double mu = 0.7, sigma = 1.5, truth = std::exp(mu);  // spans decades, as reorder's ratios do
  for (int t = 0; t < trials; ++t) {
    std::vector<double> v = normals(static_cast<uint64_t>(t), "lognormal", 40, mu, sigma);
    for (double& x : v) x = std::exp(x);
    const Interval i = geometric_interval(v);
    covered += i.low <= truth && truth <= i.high;
  }
  const double coverage = static_cast<double>(covered) / trials;
  INFO("coverage " << coverage);
  REQUIRE(coverage >= test::kMinCoverage95);
}

TEST_CASE("a paired interval is narrower than the unpaired one on correlated pairs, and decides where it cannot") {
  // B_s = A_s · (1.1 ± small): strongly correlated, as two placements on one seed's input are
  const std::vector<double> base = normals(7, "base", 12, 0.0, 0.5), noise = normals(7, "noise", 12, 0.0, 0.02);
  std::vector<double> a, b;
  for (size_t i = 0; i < base.size(); ++i) {
    a.push_back(std::exp(base[i]));
    b.push_back(std::exp(base[i] + std::log(1.1) + noise[i]));
  }
  const Paired p = compare_paired(a, b);
  const Interval u = unpaired_ratio_interval(a, b);
  REQUIRE(p.ratio);
  REQUIRE(std::log(p.interval.high / p.interval.low) < 0.2 * std::log(u.high / u.low));
  REQUIRE(p.verdict == "less");             // A < B on every seed, by ~9 %
  REQUIRE(u.low < 1.0);                     // the unpaired interval holds both directions
  REQUIRE(u.high > 1.0);
  REQUIRE(p.fraction_greater == 0.0);
  REQUIRE(compare_paired(b, a).verdict == "greater");
}

TEST_CASE("compare_paired: differences for signed values, equal and undetermined verdicts") {
  const Paired d = compare_paired({-1.0, 0.5, 2.0, 3.0}, {-2.0, -0.5, 1.0, 2.2});
  REQUIRE_FALSE(d.ratio);
  REQUIRE(d.estimate == Approx(0.95).epsilon(test::kCrossTol));
  REQUIRE(d.verdict == "greater");
  REQUIRE(compare_paired({1.0, 2.0}, {1.0, 2.0}).verdict == "equal");
  REQUIRE(compare_paired({1.0, 2.0, 3.0}, {2.0, 1.0, 3.1}).verdict == "undetermined");
  REQUIRE(compare_paired({2.0}, {1.0}).verdict == "undetermined");  // one seed decides nothing
  REQUIRE(compare_paired({2.0, 2.0}, {1.0, 1.0}).verdict == "greater");  // a constant ratio is exact
}

TEST_CASE("summary_json: the interval keys, the geometric ones only for positive values, null where undefined") {
  const Json s = summary_json({1.0, 2.0, 4.0});
  REQUIRE(s["n"] == 3);
  REQUIRE(s["median"] == 2.0);
  REQUIRE(s["geomean"].get<double>() == Approx(2.0).epsilon(test::kCrossTol));
  const double half = student_t_quantile(0.975, 2) * s["std"].get<double>() / std::sqrt(3.0);
  REQUIRE(s["ci_high"].get<double>() == Approx(7.0 / 3 + half).epsilon(test::kCrossTol));
  REQUIRE(s["se"].get<double>() == Approx(s["std"].get<double>() / std::sqrt(3.0)).epsilon(test::kCrossTol));
  REQUIRE(s["geo_ci_low"].get<double>() < 2.0);
  const Json signed_values = summary_json({-1.0, 2.0});
  REQUIRE_FALSE(signed_values.contains("geomean"));
  REQUIRE(signed_values["median"] == 0.5);
  const Json one = summary_json({5.0});
  REQUIRE(one["ci_low"].is_null());
  REQUIRE(one["se"].is_null());
  REQUIRE(one["geomean"].get<double>() == Approx(5.0).epsilon(test::kCrossTol));  // exp(ln 5)
}

TEST_CASE("Wilson's interval of a proportion") {
  const Interval none = proportion_interval(0, 10);
  REQUIRE(none.low == 0.0);
  REQUIRE(none.high == Approx(0.27753279986288926).epsilon(test::kQuantileTol));
  const Interval half = proportion_interval(5, 10);
  REQUIRE(half.low == Approx(0.236593090512564).epsilon(test::kQuantileTol));
  REQUIRE(half.high == Approx(0.7634069094874361).epsilon(test::kQuantileTol));
}

TEST_CASE("a level outside (0, 1) is refused") {
  REQUIRE_THROWS_WITH(mean_interval({1.0, 2.0}, 1.0), Catch::Contains("between 0 and 1"));
  REQUIRE_THROWS_WITH(summary_json({1.0, 2.0}, 0.0), Catch::Contains("between 0 and 1"));
}
