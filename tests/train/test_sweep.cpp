// test_sweep.cpp — the train-sweep report, CSV and table on synthetic train reports (src/train/sweep.cpp): the
// cell statistics (mean ± sample std of the final eval loss; null when no run of the cell has one), convergence
// and divergence counts, the mean eval curve, and one CSV row per run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "gradflow/train/sweep.hpp"
#include "tolerances.hpp"

using namespace gradflow;
using Json = nlohmann::ordered_json;

namespace {

// A train report as train() writes it, reduced to what the sweep reads.
Json fake_run(double final_eval, bool diverged, double floor = 1.0) {
  Json r;
  r["task"] = Json{{"name", "copy"}, {"loss_floor", floor}};
  r["log"] = Json::array();
  for (long step : {0L, 10L})
    r["log"].push_back(Json{{"step", step},
                            {"train_loss", 3.0},
                            {"eval_loss", std::isfinite(final_eval) ? Json(final_eval + double(10 - step)) : Json()},
                            {"bottom_to_top_grad_ratio", 2.0},
                            {"layers", Json::array({Json{{"grad_norm", 1.5}}, Json{{"grad_norm", 0.5}}})}});
  r["diverged"] = diverged ? Json{{"step", 7}, {"layer", 1}, {"quantity", "loss"}} : Json();
  r["final"] = Json{{"eval_loss", std::isfinite(final_eval) ? Json(final_eval) : Json()}, {"train_loss", 2.5}};
  return r;
}

struct Sweep {
  TrainSweepOptions o;
  std::vector<TrainRun> runs;
  std::vector<Json> reports;
  Sweep() {
    o.placements = {"post", "pre"};
    o.layers = {2};
    o.warmups = {0};
    o.lrs = {1e-3, 1e-2};
    o.seeds = 2;
    o.converge_margin = 0.5;
    for (const auto& p : o.placements)
      for (double lr : o.lrs)
        for (int r = 0; r < o.seeds; ++r) {
          TrainRun run;
          run.placement = p;
          run.layers = 2;
          run.lr = lr;
          run.repetition = r;
          run.tc.lr = lr;
          run.tc.init.seed = 10 + static_cast<uint64_t>(r);
          runs.push_back(run);
          // post: lr 1e-3 converges (1.0, 1.25); lr 1e-2 diverges without a final loss.
          // pre:  lr 1e-3 one seed above the margin (1.25, 2.0); lr 1e-2 diverges with finite losses (5, 7).
          if (p == "post") reports.push_back(lr < 5e-3 ? fake_run(1.0 + 0.25 * r, false) : fake_run(NAN, true));
          else reports.push_back(lr < 5e-3 ? fake_run(1.25 + 0.75 * r, false) : fake_run(5.0 + 2.0 * r, true));
        }
  }
};

}  // namespace

TEST_CASE("train_sweep_report: cell statistics, convergence, divergence", "[train][quick]") {
  Sweep s;
  const Json rep = train_sweep_report(s.o, s.runs, s.reports);
  REQUIRE(rep["groups"].size() == 2);
  const Json& post = rep["groups"][0];
  const Json& c0 = post["cells"][0];  // post, lr 1e-3
  REQUIRE(c0["runs"] == 2);
  REQUIRE(c0["converged"] == 2);
  REQUIRE(c0["diverged"] == 0);
  REQUIRE(c0["final_eval_loss_mean"].get<double>() == 1.125);
  REQUIRE(c0["final_eval_loss_std"].get<double>() == std::sqrt(2 * 0.125 * 0.125 / 1.0));
  REQUIRE(c0["mean_eval_curve"] == Json::array({Json::array({0, 11.125}), Json::array({10, 1.125})}));
  const Json& c1 = post["cells"][1];  // post, lr 1e-2: diverged, no final loss
  REQUIRE(c1["diverged"] == 2);
  REQUIRE(c1["divergence_rate"].get<double>() == 1.0);
  REQUIRE(c1["final_eval_loss_mean"].is_null());
  REQUIRE(c1["final_eval_loss_std"].is_null());
  REQUIRE(c1["mean_eval_curve"] == Json::array());
  REQUIRE(post["smallest_converging_warmup"] == Json{{"0.001", 0}, {"0.01", nullptr}});
  REQUIRE(post["largest_stable_lr"]["0"].get<double>() == 1e-3);
  REQUIRE(post["divergence_rate"].get<double>() == 0.5);
  const Json& pre = rep["groups"][1];
  REQUIRE(pre["cells"][0]["converged"] == 1);
  REQUIRE(pre["cells"][1]["final_eval_loss_mean"].get<double>() == 6.0);
  REQUIRE(pre["cells"][1]["final_eval_loss_std"].get<double>() == std::sqrt(2.0));
  REQUIRE(pre["smallest_converging_warmup"]["0.001"].is_null());
  REQUIRE(rep["ratios"].size() == 1);
  REQUIRE(rep["ratios"][0]["pair"] == "post/pre");
  REQUIRE(rep["runs"].size() == 8);
  REQUIRE(rep["runs"][0]["curve"][1]["grad_norms"] == Json::array({1.5, 0.5}));
}

TEST_CASE("train_sweep_csv and table: one row per run", "[train][quick]") {
  Sweep s;
  const Json rep = train_sweep_report(s.o, s.runs, s.reports);
  std::istringstream csv(train_sweep_csv(rep));
  std::string line;
  std::getline(csv, line);
  REQUIRE(line ==
          "placement,layers,warmup,lr,seed,loss_floor,final_eval_loss,final_train_loss,converged,diverged,diverged_step");
  std::getline(csv, line);
  REQUIRE(line == "post,2,0,0.001,10,1,1,2.5,1,0,");
  std::getline(csv, line);
  std::getline(csv, line);
  REQUIRE(line == "post,2,0,0.01,10,1,,2.5,0,1,7");
  int rows = 3;
  while (std::getline(csv, line)) ++rows;
  REQUIRE(rows == 8);
  std::ostringstream table;
  print_train_sweep_table(table, rep);
  REQUIRE(table.str().find("post L=2  divergence rate 0.50\n") == 0);
  REQUIRE(table.str().find("     0.001       0     2/2       0  1.1250 ± 0.1768\n") != std::string::npos);
  REQUIRE(table.str().find("      0.01       0     0/2       2  nan ± nan\n") != std::string::npos);
}

TEST_CASE("fitted_optimal_lr: the parabola's vertex in log2 lr, none at the grid's edge", "[train][quick]") {
  // loss = (log2 lr + 7.3)² + 1 on lr = 2^-10 .. 2^-4: the vertex 2^-7.3 exactly (a parabola through three of its
  // own points is itself)
  std::vector<double> lrs, losses;
  for (int k = -10; k <= -4; ++k) {
    lrs.push_back(std::exp2(k));
    losses.push_back((k + 7.3) * (k + 7.3) + 1.0);
  }
  CHECK(std::abs(std::log2(fitted_optimal_lr(lrs, losses)) + 7.3) < test::kClosedFormChainTol);
  std::reverse(lrs.begin(), lrs.end());  // any order
  std::reverse(losses.begin(), losses.end());
  CHECK(std::abs(std::log2(fitted_optimal_lr(lrs, losses)) + 7.3) < test::kClosedFormChainTol);
  CHECK(std::isnan(fitted_optimal_lr({1e-3, 1e-2, 1e-1}, {1.0, 2.0, 3.0})));    // lowest at the edge
  CHECK(std::isnan(fitted_optimal_lr({1e-3, 1e-2, 1e-1}, {NAN, 1.0, 3.0})));    // a neighbour diverged
  CHECK(fitted_optimal_lr({1e-3, 1e-2, 1e-1}, {2.0, 1.0, 2.0}) == Approx(1e-2).epsilon(test::kClosedFormChainTol));
  CHECK(std::isnan(fitted_optimal_lr({}, {})));
}

TEST_CASE("train_sweep_report: the optimal lr per seed and its mean and standard error over seeds", "[train][quick]") {
  TrainSweepOptions o;
  o.placements = {"pre"};
  o.layers = {2};
  o.warmups = {0};
  o.lrs = {0.25, 0.5, 1.0, 2.0};
  o.seeds = 3;
  std::vector<TrainRun> runs;
  std::vector<Json> reports;
  const double centre[3] = {-0.6, -0.4, 3.0};  // seed 2: the lowest loss at the grid's edge (lr 2)
  for (double lr : o.lrs)
    for (int r = 0; r < 3; ++r) {
      TrainRun run;
      run.placement = "pre";
      run.layers = 2;
      run.lr = lr;
      run.repetition = r;
      runs.push_back(run);
      const double u = std::log2(lr) - centre[r];
      reports.push_back(fake_run(1.0 + u * u, false));
    }
  const Json opt = train_sweep_report(o, runs, reports)["groups"][0]["optimal_lr"]["0"];
  CHECK(opt["seeds_fitted"] == 2);
  CHECK(opt["seeds_without_inner_minimum"] == 1);
  CHECK(opt["log2_lr_mean"].get<double>() == Approx(-0.5).epsilon(test::kClosedFormChainTol));
  CHECK(opt["log2_lr_stderr"].get<double>() == Approx(0.1).epsilon(test::kClosedFormChainTol));  // sd 0.1414/√2
  CHECK(opt["lr"].get<double>() == Approx(std::exp2(-0.5)).epsilon(test::kClosedFormChainTol));
}
