// test_metric_names.cpp — the metrics named in report/fields.hpp (the comparison table's columns, the figures'
// axes) are the names experiments/aggregate.hpp gives the same numbers, and each has both of its labels.
#include <catch2/catch.hpp>

#include <set>

#include "gradflow/experiments/aggregate.hpp"
#include "gradflow/report/fields.hpp"

using namespace gradflow;
using namespace gradflow::fields;
using Json = nlohmann::ordered_json;

TEST_CASE("metric names: scope, field and key joined with dots", "[experiments][quick]") {
  REQUIRE(metric_name(metrics::kGradRatio) == "summary.bottom_to_top_grad_ratio");
  REQUIRE(metric_name(metrics::kTopW2GradNorm) == "top.param_grad_norms.linear2.weight");
  REQUIRE(metric_name(metrics::kBlockSpectralNorm) == "block_jacobian.spectral_norm");
  REQUIRE(metric_name(metrics::kLayerGradNorm) == "grad_norm");
  REQUIRE(find_metric("summary.grad_growth_factor_per_layer") == &metrics::kGrowthFactor);
  REQUIRE(find_metric("summary.no_such_metric") == nullptr);
  std::set<std::string> names;
  for (const Metric* m : metrics::kAll) {
    INFO(metric_name(*m));
    REQUIRE(names.insert(metric_name(*m)).second);
    REQUIRE(*m->text);
    REQUIRE(*m->plot);
  }
}

TEST_CASE("every metric named in fields.hpp is one the aggregation produces", "[experiments][quick]") {
  Json layer = Json{{kIndex, 0},
                    {kGradNorm, 2.0},
                    {kActivationRms, 1.0},
                    {kParamGradNorms, {{kFfnOutWeight, 3.0}}},
                    {kBlockJacobian, {{kSpectralNorm, 1.5}, {kMinusIdentityRelativeFrobenius, 0.3}}},
                    {kProductJacobian, {{kSpectralNorm, 1.2}, {kMinSingularValue, 0.1}}},
                    {kTokenGeometry, {{kMeanCosine, 0.1}, {kRankOneDistance, 0.9}, {kStableRank, 3.0}}}};
  Json report = Json{{kConfig, {{kSeed, 0}}}, {kOutputGradNorm, 1.0}, {kOutputRms, 1.0}, {kLayers, {layer, layer}},
                     {kOutputTokenGeometry, {{kMeanCosine, 0.2}}}};
  report[kSummary] = Json{{kBottomToTopGradRatio, 1.0},     {kGradGrowthRatePerLayer, 0.0},
                          {kGradGrowthFactorPerLayer, 1.0}, {kBottomProductRmsGain, 1.0},
                          {kPerLayerRmsGainProduct, 1.0}};
  std::set<std::string> scalars, per_layer;
  for (const auto& [k, v] : scalar_metrics(report)) scalars.insert(k);
  for (const auto& [k, v] : layer_metrics(layer)) per_layer.insert(k);
  for (const Metric* m : metrics::kAll) {
    INFO(metric_name(*m));
    // per-layer quantities are layer metrics; the rest are scalar metrics of a compare/sweep group
    const bool is_layer = !*m->scope && per_layer.count(metric_name(*m));
    REQUIRE((is_layer || scalars.count(metric_name(*m))));
  }
}
