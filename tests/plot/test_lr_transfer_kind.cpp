// test_lr_transfer_kind.cpp — `--kind lr-transfer` from train-sweep reports (train/sweep.hpp): a line per size (one
// report per width), the fitted optimum of each drawn at the report's optimal_lr, and the inputs it cannot draw
// refused by name.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "gradflow/plot/kinds.hpp"
#include "gradflow/train/sweep.hpp"
#include "plot/plot_fixtures.hpp"
#include "tolerances.hpp"

using namespace gradflow;
using namespace gradflow::test;

namespace {

// A train-sweep report of placement pre at width d whose final losses are 1 + (log2 lr - centre)² for every seed.
J sweep_at(Index d, double centre, std::vector<long> warmups = {0}) {
  TrainSweepOptions o;
  o.placements = {"pre"};
  o.layers = {2};
  o.warmups = warmups;
  o.lrs = {0.125, 0.25, 0.5, 1.0, 2.0};
  o.seeds = 2;
  std::vector<TrainRun> runs;
  std::vector<J> reports;
  for (double lr : o.lrs)
    for (long w : o.warmups)
      for (int r = 0; r < 2; ++r) {
        TrainRun run;
        run.placement = "pre";
        run.layers = 2;
        run.lr = lr;
        run.warmup = w;
        run.repetition = r;
        run.tc.model.d_model = d;
        runs.push_back(run);
        const double u = std::log2(lr) - centre, loss = 1.0 + u * u;
        J t;
        t["task"] = J{{"name", "copy"}, {"loss_floor", 0.0}};
        t["log"] = J::array({J{{"step", 10}, {"train_loss", loss}, {"eval_loss", loss}, {"bottom_to_top_grad_ratio", 1.0},
                               {"layers", J::array()}}});
        t["diverged"] = nullptr;
        t["final"] = J{{"eval_loss", loss}, {"train_loss", loss}};
        reports.push_back(t);
      }
  return train_sweep_report(o, runs, reports);
}

}  // namespace

TEST_CASE("lr-transfer kind: a line per width, each optimum at the report's fitted lr", "[gnuplot]") {
  require_gnuplot();
  TempDir dir;
  const J a = sweep_at(32, -1.3), b = sweep_at(64, -0.6);
  CHECK(a["groups"][0]["optimal_lr"]["0"]["log2_lr_mean"].get<double>() == Approx(-1.3).epsilon(kClosedFormChainTol));
  const std::string pa = write_json(dir, "w32.json", a), pb = write_json(dir, "w64.json", b);
  PlotOptions o;
  o.kind = "lr-transfer";
  o.inputs = {pa, pb};
  o.output = dir.file("lrt.svg");
  o.width = 4;
  make_plot(o, "test");
  const std::string svg = read_bytes(o.output);
  CHECK(xml_problem(svg) == "");
  for (const char* t : {">d = 32<", ">d = 64<", ">fitted optimum<"}) CHECK(svg.find(t) != std::string::npos);
  // the data file: the stars at 2^-1.3 and 2^-0.6 at the lines' lowest losses (1 + 0.3², 1 + 0.4²)
  std::vector<std::pair<double, double>> points;  // every (x, y) row of the data file
  {
    std::istringstream data(read_bytes(o.output + ".dat"));
    std::string line;
    while (std::getline(data, line)) {
      double x, y;
      if (line.empty() || line[0] == '#' || std::sscanf(line.c_str(), "%lf %lf", &x, &y) != 2) continue;
      points.push_back({x, y});
    }
  }
  for (const auto& [x, y] : {std::pair<double, double>{std::exp2(-1.3), 1.09}, {std::exp2(-0.6), 1.16}}) {
    INFO("a star at (" << x << ", " << y << ")");
    CHECK(std::any_of(points.begin(), points.end(), [&](const auto& p) {
      return std::abs(p.first - x) <= kClosedFormChainTol * x && std::abs(p.second - y) <= kClosedFormChainTol * y;
    }));
  }
  o.inputs = {write_json(dir, "w2.json", sweep_at(32, -1.0, {0, 10}))};
  CHECK_THROWS_WITH(make_plot(o, "test"), Catch::Contains("one warmup"));
  o.inputs = {pa, pa};
  CHECK_THROWS_WITH(make_plot(o, "test"), Catch::Contains("one report per size"));
  o.inputs = {write_json(dir, "post.json", analyze_report("post", 4, 1.0, 0.7))};
  CHECK_THROWS_WITH(make_plot(o, "test"), Catch::Contains("train"));
}
