// test_experiment.cpp — the experiment report on synthetic per-seed reports: paired ratios, power-law fits along
// depth, the long CSV (experiments/experiment.hpp).
#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>

#include "gradflow/experiments/experiment.hpp"
#include "gradflow/experiments/experiment_terminal.hpp"
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
    configs = plan_configurations(axes, [](const std::string& p, Index d, const std::string&, const std::string&) {
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
  REQUIRE(line == "placement,depth,layer,metric,mean,std,n,se,ci_low,ci_high,median,geomean,geo_ci_low,geo_ci_high,verdict");
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

namespace {

// A 2-D sweep: init-scale C in {1, 2, 4} x residual-scale λ in {0.5, 1}, post and pre, 2 seeds; bottom gradient
// c·C^a·λ^b·(1 + 0.1·seed) with (a, b) = (1, -2) for post and (0, 1) for pre.
struct Fixture2d {
  PlanAxes axes;
  std::vector<Configuration> configs;
  std::vector<Json> reports;
  Fixture2d() {
    axes.placements = {"post", "pre"};
    axes.depths = {3};
    axes.param = "init-scale";
    axes.values = {"1", "2", "4"};
    axes.param2 = "residual-scale";
    axes.values2 = {"0.5", "1"};
    axes.seeds = 2;
    configs = plan_configurations(axes, [](const std::string& p, Index d, const std::string& v, const std::string& v2) {
      PointConfig pc;
      pc.rc.model.placement = p;
      pc.rc.model.layers = d;
      pc.x = std::stod(v);
      pc.x2 = std::stod(v2);
      return pc;
    });
    for (const auto& c : configs) {
      const bool post = c.placement == "post";
      Json r = fake(c.depth, 1.0, 0.0, c.repetition);
      const double g = std::pow(c.x, post ? 1.0 : 0.0) * std::pow(c.x2, post ? -2.0 : 1.0) * (1 + 0.1 * c.repetition);
      for (auto& l : r["layers"]) l["grad_norm"] = g;
      reports.push_back(r);
    }
  }
};

}  // namespace

TEST_CASE("experiment_report of a 2-D sweep: both axes in groups, ratios at equal values, fits along each axis") {
  Fixture2d f;
  ExperimentInfo info{"sweep", f.axes, Json{{"command", "sweep"}}};
  const Json rep = experiment_report(info, f.configs, f.reports);
  REQUIRE(rep["param"] == "init-scale");
  REQUIRE(rep["param2"] == "residual-scale");
  REQUIRE(rep["values2"] == Json::array({"0.5", "1"}));
  REQUIRE(rep["groups"].size() == 12);
  const Json& g = rep["groups"][3];  // post, C = 2, λ = 1
  REQUIRE(g["value"] == "2");
  REQUIRE(g["value2"] == "1");
  REQUIRE(g["param2"] == "residual-scale");
  REQUIRE(g["x2"].get<double>() == 1.0);
  REQUIRE(g["scalars"]["bottom.grad_norm"]["mean"].get<double>() == Approx(2.0 * 1.05).epsilon(test::kCrossTol));
  // ratios pair equal (value, value2): post/pre at C = 4, λ = 0.5 is 4·4 / 0.5 = 32 for every seed
  REQUIRE(rep["ratios"].size() == 6);
  const Json& r = rep["ratios"][4];
  REQUIRE(r["value"] == "4");
  REQUIRE(r["value2"] == "0.5");
  REQUIRE(r["metrics"]["bottom.grad_norm"]["mean"].get<double>() == Approx(32.0).epsilon(test::kCrossTol));
  REQUIRE(r["metrics"]["bottom.grad_norm"]["std"].get<double>() < test::kCrossTol);
  // fits: along init-scale for each λ (2 per placement), then along residual-scale for each C (3 per placement)
  const Json& fits = rep["fits"];
  REQUIRE(fits.size() == 2 * 2 + 2 * 3);
  REQUIRE(fits[0]["placement"] == "post");
  REQUIRE(fits[0]["x"] == "init-scale");
  REQUIRE(fits[0]["at"] == Json{{"residual-scale", "0.5"}});
  REQUIRE(fits[0]["x_values"] == Json::array({1.0, 2.0, 4.0}));
  REQUIRE(fits[0]["exponent"]["bottom.grad_norm"]["mean"].get<double>() == Approx(1.0).epsilon(test::kCrossTol));
  REQUIRE(fits[2]["placement"] == "pre");
  REQUIRE(fits[2]["exponent"]["bottom.grad_norm"]["mean"].get<double>() == Approx(0.0).margin(test::kCrossTol));
  REQUIRE(fits[4]["x"] == "residual-scale");
  REQUIRE(fits[4]["at"] == Json{{"init-scale", "1"}});
  REQUIRE(fits[4]["exponent"]["bottom.grad_norm"]["mean"].get<double>() == Approx(-2.0).epsilon(test::kCrossTol));
  REQUIRE(fits[7]["placement"] == "pre");
  REQUIRE(fits[7]["exponent"]["bottom.grad_norm"]["exponent_of_means"].get<double>() ==
          Approx(1.0).epsilon(test::kCrossTol));
  // CSV and table carry both axes
  const std::string csv = experiment_csv(rep);
  REQUIRE(csv.rfind("placement,depth,param,value,param2,value2,layer,metric,mean,std,n,se,ci_low,ci_high,median,geomean,geo_ci_low,geo_ci_high,verdict\n", 0) == 0);
  REQUIRE(csv.find("\npost,3,init-scale,2,residual-scale,1,0,grad_norm,") != std::string::npos);
  REQUIRE(csv.find("\npost/pre,3,init-scale,4,residual-scale,0.5,,bottom.grad_norm,") != std::string::npos);
  std::ostringstream table;
  print_experiment_table(table, rep);
  REQUIRE(table.str().find("residual-scale") != std::string::npos);
  REQUIRE(table.str().find("x = residual-scale at init-scale = 4:") != std::string::npos);
}

TEST_CASE("a compare's bars (issue 38): every group on one scale, the placements of a depth side by side, narrow fits "
          "80 columns") {
  Fixture f;
  ExperimentInfo info{"compare", f.axes, Json::object()};
  const Json rep = experiment_report(info, f.configs, f.reports);
  // ||dL/dx_l|| means over the 3 seeds: post 2.2 everywhere, pre 0.55 (L = 4) and 0.275 (L = 16); the largest, 2.2,
  // draws 24 '#', 4 a decade: pre 24 + 4 log10(0.25) = 21.6 -> 22 and 24 + 4 log10(0.125) = 20.4 -> 20
  std::ostringstream out;
  print_experiment_bars(out, rep, TerminalStyle{true, false}, false);
  const std::string s = out.str();
  INFO(s);
  REQUIRE(s.find("L = 4\nlayer Post-LN") != std::string::npos);
  REQUIRE(s.find("\n0     " + std::string(24, '#') + " 2.20e+00  " + std::string(22, '#') + "   5.50e-01\n") !=
          std::string::npos);
  REQUIRE(s.find("\n15    " + std::string(24, '#') + " 2.20e+00  " + std::string(20, '#') + "     2.75e-01\n") !=
          std::string::npos);
  REQUIRE(s.find(" \n") == std::string::npos);  // no trailing spaces
  std::ostringstream narrow;
  print_experiment_bars(narrow, rep, TerminalStyle{true, true}, false);
  std::istringstream in(narrow.str());
  for (std::string line; std::getline(in, line);) REQUIRE(line.size() <= kNarrowColumns);
  REQUIRE(narrow.str().find(std::string(12, '#') + " 2.20e+00") != std::string::npos);  // 12 '#', 2 a decade
  REQUIRE(narrow.str().find(std::string(13, '#')) == std::string::npos);
  std::ostringstream table;  // the narrow table: three metric columns, every line within 80 columns
  print_experiment_table(table, rep, TerminalStyle{false, true});
  std::istringstream t(table.str());
  for (std::string line; std::getline(t, line);) {
    size_t shown = 0;
    for (unsigned char c : line) shown += (c & 0xC0) != 0x80;
    REQUIRE(shown <= kNarrowColumns);
  }
  // many groups: one line instead of pages of bars, unless forced
  Json many = rep;
  while (many["groups"].size() <= kMaxBarGroups) many["groups"].push_back(rep["groups"][0]);
  std::ostringstream summary, forced;
  print_experiment_bars(summary, many, TerminalStyle{true, false}, false);
  print_experiment_bars(forced, many, TerminalStyle{true, false}, true);
  REQUIRE(summary.str().find("(no bars: 13 groups, more than 12") == 0);
  REQUIRE(forced.str().find("L = 4") != std::string::npos);
}
