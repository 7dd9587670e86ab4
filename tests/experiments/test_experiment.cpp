// test_experiment.cpp — the experiment report on synthetic per-seed reports: paired ratios, power-law fits along
// depth, the long CSV (experiments/experiment.hpp).
#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>

#include "gradflow/experiments/experiment.hpp"
#include "tolerances.hpp"

using namespace gradflow;
using Json = nlohmann::ordered_json;

namespace {

// A fake analyze report: L layers, bottom gradient c·L^k·(1 + 0.1·seed).
Json fake(Index L, double c, double k, int seed) {
  Json r;
  r["config"] = Json{{"seed", seed}, {"d_model", 8}};
  r["layers"] = Json::array();
  for (Index l = 0; l < L; ++l)
    r["layers"].push_back(Json{{"index", l}, {"grad_norm", c * std::pow(double(L), k) * (1 + 0.1 * seed)}});
  r["summary"] = Json{{"bottom_to_top_grad_ratio", 1.0}};
  r["elapsed_seconds"] = 0.1 * seed;
  return r;
}

struct Fixture {
  PlanAxes axes;
  std::vector<Configuration> configs;
  std::vector<Json> reports;
  Fixture() {
    axes.placements = {"post", "pre"};
    axes.depths = {4, 16};
    axes.seeds = 3;
    configs = plan_configurations(axes, [](const std::string& p, Index d, const std::string&) {
      PointConfig pc;
      pc.rc.model.placement = p;
      pc.rc.model.layers = d;
      pc.x = double(d);
      return pc;
    });
    for (const auto& c : configs)
      reports.push_back(c.placement == "post" ? fake(c.depth, 2.0, 0.0, c.repetition)
                                              : fake(c.depth, 1.0, -0.5, c.repetition));
  }
};

}  // namespace

TEST_CASE("experiment_report: groups with mean/std, paired ratios, exponents along depth") {
  Fixture f;
  ExperimentInfo info{"compare", f.axes, Json{{"command", "compare"}}};
  const Json rep = experiment_report(info, f.configs, f.reports);
  REQUIRE(rep["groups"].size() == 4);
  REQUIRE(rep["groups"][0]["seeds"] == Json::array({0, 1, 2}));
  REQUIRE(rep["groups"][0]["per_layer"].size() == 4);
  REQUIRE(rep["groups"][0]["scalars"]["bottom.grad_norm"]["mean"].get<double>() ==
          Approx(2.0 * 1.1).epsilon(test::kCrossTol));
  REQUIRE(rep["spec"]["command"] == "compare");
  // post/pre at L = 16: the per-seed ratio is 2/(1/4) = 8 for every seed (the seed factor cancels)
  REQUIRE(rep["ratios"].size() == 2);
  const Json& r16 = rep["ratios"][1];
  REQUIRE(r16["layers"] == 16);
  REQUIRE(r16["metrics"]["bottom.grad_norm"]["mean"].get<double>() == Approx(8.0).epsilon(test::kCrossTol));
  REQUIRE(r16["metrics"]["bottom.grad_norm"]["std"].get<double>() < test::kCrossTol);
  // exponents: post flat (0), pre -1/2, for every seed
  REQUIRE(rep["fits"].size() == 2);
  REQUIRE(rep["fits"][0]["exponent"]["bottom.grad_norm"]["mean"].get<double>() == Approx(0.0).margin(test::kCrossTol));
  REQUIRE(rep["fits"][1]["exponent"]["bottom.grad_norm"]["mean"].get<double>() == Approx(-0.5).epsilon(test::kCrossTol));
  REQUIRE(rep["fits"][1]["exponent"]["bottom.grad_norm"]["n"] == 3);
  REQUIRE(rep.dump().find("elapsed") == std::string::npos);
}

TEST_CASE("experiment_report does not depend on the order configurations finished in") {
  Fixture f;
  ExperimentInfo info{"compare", f.axes, Json::object()};
  const std::string a = experiment_report(info, f.configs, f.reports).dump();
  for (size_t i = 0; i < f.reports.size(); ++i) f.reports[i]["elapsed_seconds"] = 100.0 - double(i);
  REQUIRE(experiment_report(info, f.configs, f.reports).dump() == a);
}

TEST_CASE("experiment_csv: long format, one row per placement, depth, layer, metric, plus ratios") {
  Fixture f;
  ExperimentInfo info{"compare", f.axes, Json::object()};
  const Json rep = experiment_report(info, f.configs, f.reports);
  const std::string csv = experiment_csv(rep);
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  REQUIRE(line == "placement,depth,layer,metric,mean,std,n");
  int rows = 0, ratio_rows = 0;
  while (std::getline(in, line)) {
    ++rows;
    if (line.rfind("post/pre,", 0) == 0) ++ratio_rows;
  }
  // per group: L layer rows + 3 scalars (summary ratio, bottom and top grad_norm; no timing); ratios: 3 per depth
  REQUIRE(rows == (4 + 3) * 2 + (16 + 3) * 2 + 3 * 2);
  REQUIRE(ratio_rows == 6);
  REQUIRE(csv.find("post,16,15,grad_norm,") != std::string::npos);
  std::ostringstream table;
  print_experiment_table(table, rep);
  REQUIRE(table.str().find("post/pre") != std::string::npos);
}
