// test_aggregate.cpp — mean/std over seeds, metric flattening, power-law fits (experiments/aggregate.hpp).
#include <catch2/catch.hpp>
#include <cmath>

#include "gradflow/experiments/aggregate.hpp"
#include "tolerances.hpp"

using namespace gradflow;
using Json = nlohmann::ordered_json;

TEST_CASE("mean_std: sample standard deviation, n = 1 gives std 0") {
  const Stat s = mean_std({1, 2, 3, 4});
  REQUIRE(s.n == 4);
  REQUIRE(s.mean == Approx(2.5).epsilon(test::kCrossTol));
  REQUIRE(s.std == Approx(std::sqrt(5.0 / 3.0)).epsilon(test::kCrossTol));
  const Stat one = mean_std({7});
  REQUIRE(one.mean == 7);
  REQUIRE(one.std == 0);
  REQUIRE(one.n == 1);
  REQUIRE(mean_std({}).n == 0);
}

TEST_CASE("flatten_numbers keeps numeric leaves with dotted names, skips strings, arrays and timings") {
  const Json j = Json::parse(R"({"a": 1, "b": {"c": 2.5, "method": "svd", "spectrum": [1, 2]},
                                "elapsed_seconds": 9, "ok": true})");
  Metrics m;
  flatten_numbers(j, "", m);
  REQUIRE(m.size() == 2);
  REQUIRE(m[0].first == "a");
  REQUIRE(m[1].first == "b.c");
  REQUIRE(m[1].second == 2.5);
}

TEST_CASE("scalar_metrics: summary, top-level numbers, bottom and top layer") {
  const Json r = Json::parse(R"({"config": {"seed": 3}, "layers": [
      {"index": 0, "grad_norm": 1.0, "param_grad_norms": {"linear2.weight": 0.1}},
      {"index": 1, "grad_norm": 2.0, "param_grad_norms": {"linear2.weight": 0.2}}],
      "output_grad_norm": 5.0, "summary": {"bottom_to_top_grad_ratio": 0.5}, "elapsed_seconds": 1.0})");
  const Metrics m = scalar_metrics(r);
  std::map<std::string, double> got(m.begin(), m.end());
  REQUIRE(got.size() == 6);
  REQUIRE(got.at("summary.bottom_to_top_grad_ratio") == 0.5);
  REQUIRE(got.at("output_grad_norm") == 5.0);
  REQUIRE(got.at("bottom.grad_norm") == 1.0);
  REQUIRE(got.at("top.param_grad_norms.linear2.weight") == 0.2);
  REQUIRE(m.front().first == "summary.bottom_to_top_grad_ratio");
}

TEST_CASE("aggregate_seeds: per-layer and scalar mean/std over seeds of one structure") {
  const Json a = Json::parse(R"({"layers": [{"index": 0, "grad_norm": 1.0, "extra": 4.0}], "summary": {"s": 1.0}})");
  const Json b = Json::parse(R"({"layers": [{"index": 0, "grad_norm": 3.0, "extra": 6.0}], "summary": {"s": 3.0}})");
  const Json agg = aggregate_seeds({&a, &b});
  REQUIRE(agg["layers"].size() == 1);
  REQUIRE(agg["layers"][0]["grad_norm"]["mean"] == 2.0);
  REQUIRE(agg["layers"][0]["grad_norm"]["std"].get<double>() == Approx(std::sqrt(2.0)).epsilon(test::kCrossTol));
  REQUIRE(agg["layers"][0]["grad_norm"]["n"] == 2);
  REQUIRE(agg["layers"][0]["extra"]["n"] == 2);
  REQUIRE(agg["scalars"]["summary.s"]["mean"] == 2.0);
}

TEST_CASE("aggregate_seeds: a field missing or of another type in one seed is refused, never dropped from n") {
  const Json a = Json::parse(R"({"config": {"seed": 0}, "layers": [{"index": 0, "grad_norm": 1.0, "extra": 4.0}]})");
  const Json missing = Json::parse(R"({"config": {"seed": 1}, "layers": [{"index": 0, "grad_norm": 3.0}]})");
  REQUIRE_THROWS_WITH(aggregate_seeds({&a, &missing}), Catch::Contains("disagree at 'layers[0].extra'") &&
                                                           Catch::Contains("missing for seed 1") && Catch::Contains("fix:"));
  const Json text = Json::parse(R"({"config": {"seed": 1}, "layers": [{"index": 0, "grad_norm": 3.0, "extra": "x"}]})");
  REQUIRE_THROWS_WITH(aggregate_seeds({&a, &text}), Catch::Contains("not a number for seed 1"));
  // a list of numbers may differ in length (a --precision report's underflow_layers: which layers, per seed), not in
  // kind
  const Json l0 = Json::parse(R"({"config": {"seed": 0}, "layers": [{"index": 0, "grad_norm": 1.0}], "u": []})");
  const Json l1 = Json::parse(R"({"config": {"seed": 1}, "layers": [{"index": 0, "grad_norm": 2.0}], "u": [0, 3]})");
  REQUIRE(aggregate_seeds({&l0, &l1})["layers"][0]["grad_norm"]["n"] == 2);
  const Json lx = Json::parse(R"({"config": {"seed": 1}, "layers": [{"index": 0, "grad_norm": 2.0}], "u": ["a"]})");
  REQUIRE_THROWS_WITH(aggregate_seeds({&l0, &lx}), Catch::Contains("disagree at 'u"));
  // null where another seed has a number is a value the run could not define (NaN written as null): kept, n lower
  const Json null = Json::parse(R"({"config": {"seed": 1}, "layers": [{"index": 0, "grad_norm": 3.0, "extra": null}]})");
  REQUIRE(aggregate_seeds({&a, &null})["layers"][0]["extra"]["n"] == 1);
}

TEST_CASE("mean_std: values near the largest double without overflow, ordinary ones bit for bit as plain sums") {
  const Stat big = mean_std({1e308, 1.5e308});
  REQUIRE(big.mean == 1.25e308);
  REQUIRE(big.std == Approx(std::sqrt(0.125) * 1e308).epsilon(test::kCrossTol));
  const std::vector<double> v{0.1, 0.7, 2.3};
  double sum = 0;
  for (double x : v) sum += x;
  REQUIRE(mean_std(v).mean == sum / 3);  // the plain sum's bits
  REQUIRE_THROWS_WITH(mean_std({1.7e308, -1.7e308}), Catch::Contains("exceeds the largest double"));
}

TEST_CASE("power_law_exponent recovers k of y = c x^k and refuses what it cannot fit") {
  const std::vector<double> x{6, 12, 24, 48};
  std::vector<double> y;
  for (double v : x) y.push_back(3.0 * std::pow(v, -0.5));
  REQUIRE(power_law_exponent(x, y) == Approx(-0.5).epsilon(test::kCrossTol));
  REQUIRE(std::isnan(power_law_exponent({1}, {1})));
  REQUIRE(std::isnan(power_law_exponent({1, 2}, {1, -1})));
  REQUIRE(std::isnan(power_law_exponent({2, 2}, {1, 3})));
}
