// test_metric_labels.cpp — figure labels come from report/fields.hpp: a metric with a label shows it, any other
// metric shows its name (metric_label returns ""), and the default metric is the bottom/top gradient ratio.
#include <catch2/catch.hpp>

#include "plot/metric_labels.hpp"

using namespace gradflow;

TEST_CASE("metric labels are fields.hpp's plot labels", "[plot][quick]") {
  REQUIRE(kDefaultMetric == "summary.bottom_to_top_grad_ratio");
  REQUIRE(metric_label(kDefaultMetric) == fields::metrics::kGradRatio.plot);
  REQUIRE(metric_label("top.param_grad_norms.linear2.weight") == fields::metrics::kTopW2GradNorm.plot);
  REQUIRE(metric_label("summary.loss_of_something_new").empty());
  REQUIRE(param_label("layers") == "depth {/:Italic L}");
  REQUIRE(param_label("rezero-alpha") == "rezero-alpha");
}
