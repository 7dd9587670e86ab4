// sweep.cpp — see sweep.hpp. The parallel loop and the --resume files are src/experiments/runner.cpp's
// (run_resumable): a worker runs one training with its OpenMP team set to 1 and writes {"configuration", "report"}
// atomically.
#include "gradflow/train/sweep.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "gradflow/core/error.hpp"
#include "gradflow/experiments/runner.hpp"

namespace gradflow {
using Json = nlohmann::ordered_json;

namespace {

std::string short_num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? NAN : s / static_cast<double>(v.size());
}
double stddev(const std::vector<double>& v) {  // sample std (n − 1), 0 for one value
  if (v.size() < 2) return v.empty() ? NAN : 0.0;
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}
Json num(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

}  // namespace

std::string TrainRun::file_name() const {
  return placement + "_L" + std::to_string(layers) + "_w" + std::to_string(warmup) + "_lr" + short_num(lr) + "_s" +
         std::to_string(repetition) + ".json";
}

std::vector<TrainRun> plan_train_runs(const TrainSweepOptions& o,
                                      const std::function<TrainConfig(const std::string&, Index)>& make) {
  require(!o.placements.empty() && !o.layers.empty() && !o.warmups.empty() && !o.lrs.empty(),
          "train-sweep needs at least one placement, depth, warmup and learning rate; fix: e.g. --placements post,pre "
          "--layers 6 --warmup 0,100 --lr 1e-3");
  require(o.seeds >= 1, "--seeds must be >= 1 (got " + std::to_string(o.seeds) + "); fix: e.g. --seeds 3");
  require(o.converge_margin > 0 && std::isfinite(o.converge_margin), "--converge-margin must be > 0; fix: e.g. 0.05");
  std::vector<TrainRun> runs;
  for (const auto& p : o.placements)
    for (Index L : o.layers) {
      const TrainConfig base = make(p, L);
      for (double lr : o.lrs)
        for (long w : o.warmups)
          for (int r = 0; r < o.seeds; ++r) {
            TrainRun run;
            run.placement = p;
            run.layers = L;
            run.warmup = w;
            run.lr = lr;
            run.repetition = r;
            run.tc = base;
            run.tc.lr = lr;
            run.tc.warmup = w;
            run.tc.init.seed = base.init.seed + static_cast<uint64_t>(r);
            run.tc.threads = 1;
            run.tc.progress = false;
            validate_train(run.tc);
            runs.push_back(std::move(run));
          }
    }
  return runs;
}

std::vector<Json> run_train_runs(const std::vector<TrainRun>& runs, const TrainSweepOptions& o) {
  std::vector<ResumableJob> jobs;
  jobs.reserve(runs.size());
  for (const auto& r : runs) {
    const std::string file = r.file_name();
    jobs.push_back(ResumableJob{file.substr(0, file.size() - 5), [&r] { return train_config_json(r.tc); },
                                [&r] { return train(r.tc); }});
  }
  const auto describe = [](const Json& r) {
    char buf[64];
    const bool has = r.is_object() && r["final"]["eval_loss"].is_number();
    std::snprintf(buf, sizeof buf, "  eval %.4f", has ? r["final"]["eval_loss"].get<double>() : NAN);
    return std::string(buf) + (r.is_object() && !r["diverged"].is_null() ? " diverged" : "");
  };
  RunnerOptions ro;
  ro.threads = o.threads;
  ro.resume_dir = o.resume_dir;
  ro.progress = o.progress;
  return run_resumable(jobs, ro, "run", describe);
}

Json train_sweep_report(const TrainSweepOptions& o, const std::vector<TrainRun>& runs, const std::vector<Json>& reports) {
  Json rep;
  Json spec;
  spec["placements"] = o.placements;
  spec["layers"] = o.layers;
  spec["warmup"] = o.warmups;
  spec["lr"] = o.lrs;
  spec["seeds"] = o.seeds;
  spec["converge_margin"] = o.converge_margin;
  rep["grid"] = spec;
  rep["config"] = runs.empty() ? Json() : train_config_json(runs[0].tc);
  rep["config"].erase("lr");
  rep["config"].erase("warmup");
  rep["config"].erase("placement");
  rep["config"].erase("layers");
  rep["config"]["base_seed"] = runs.empty() ? 0 : runs[0].tc.init.seed;
  rep["config"].erase("seed");
  rep["definitions"] = Json{
      {"converged", "not diverged and final eval loss <= loss_floor + converge_margin"},
      {"diverged", "NaN/Inf in activations, gradients or loss, or a train loss above diverge_loss, at any step"},
      {"cell_converges", "every seed of the (placement, layers, lr, warmup) cell converged"},
      {"largest_stable_lr", "largest lr whose cell converges at that warmup"},
      {"smallest_converging_warmup", "smallest warmup whose cell converges at that lr"},
      {"seed_rule", "repetition r runs with seed = base_seed + r (weights and batches); eval set from seed + 1000003"}};
  // per run
  Json rows = Json::array();
  struct Cell {
    std::vector<double> finals;
    int n = 0, conv = 0, div = 0;
    std::map<long, std::vector<double>> curve;  // step -> eval losses
  };
  std::map<std::tuple<std::string, Index, double, long>, Cell> cells;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = reports[i];
    const auto& run = runs[i];
    const double floor = r["task"]["loss_floor"].get<double>();
    const double fe = r["final"]["eval_loss"].is_number() ? r["final"]["eval_loss"].get<double>() : NAN;
    const bool div = !r["diverged"].is_null();
    const bool conv = !div && std::isfinite(fe) && fe <= floor + o.converge_margin;
    Json row;
    row["placement"] = run.placement;
    row["layers"] = run.layers;
    row["warmup"] = run.warmup;
    row["lr"] = run.lr;
    row["seed"] = run.tc.init.seed;
    row["loss_floor"] = floor;
    row["final_eval_loss"] = num(fe);
    row["final_train_loss"] = r["final"]["train_loss"];
    row["converged"] = conv;
    row["diverged"] = r["diverged"];
    Json curve = Json::array();
    auto& cell = cells[{run.placement, run.layers, run.lr, run.warmup}];
    for (const auto& e : r["log"]) {
      Json g = Json::array();
      for (const auto& l : e["layers"]) g.push_back(l["grad_norm"]);
      curve.push_back(Json{{"step", e["step"]}, {"train_loss", e["train_loss"]}, {"eval_loss", e["eval_loss"]},
                           {"bottom_to_top_grad_ratio", e["bottom_to_top_grad_ratio"]}, {"grad_norms", g}});
      if (e["eval_loss"].is_number()) cell.curve[e["step"].get<long>()].push_back(e["eval_loss"].get<double>());
    }
    row["curve"] = std::move(curve);
    rows.push_back(std::move(row));
    ++cell.n;
    cell.conv += conv;
    cell.div += div;
    if (std::isfinite(fe)) cell.finals.push_back(fe);
  }
  // per (placement, depth)
  Json groups = Json::array();
  std::map<std::pair<std::string, Index>, Json> by_group;
  for (const auto& p : o.placements)
    for (Index L : o.layers) {
      Json g;
      g["placement"] = p;
      g["layers"] = L;
      Json cj = Json::array();
      int n = 0, div = 0;
      Json warm = Json::object(), stable = Json::object(), nondiv = Json::object();
      for (double lr : o.lrs) {
        Json best = nullptr;
        for (long w : o.warmups) {
          const Cell& c = cells[{p, L, lr, w}];
          n += c.n;
          div += c.div;
          Json mc = Json::array();
          for (const auto& [s, v] : c.curve) mc.push_back(Json{s, mean(v)});
          cj.push_back(Json{{"lr", lr}, {"warmup", w}, {"runs", c.n}, {"converged", c.conv}, {"diverged", c.div},
                            {"divergence_rate", static_cast<double>(c.div) / c.n},
                            {"final_eval_loss_mean", num(mean(c.finals))}, {"final_eval_loss_std", num(stddev(c.finals))},
                            {"mean_eval_curve", mc}});
          if (best.is_null() && c.conv == c.n) best = w;
        }
        warm[short_num(lr)] = best;
      }
      for (long w : o.warmups) {
        Json best = nullptr, best_nd = nullptr;
        for (double lr : o.lrs) {
          const Cell& c = cells[{p, L, lr, w}];
          if (c.conv == c.n && (best.is_null() || lr > best.get<double>())) best = lr;
          if (c.div == 0 && (best_nd.is_null() || lr > best_nd.get<double>())) best_nd = lr;
        }
        stable[std::to_string(w)] = best;
        nondiv[std::to_string(w)] = best_nd;
      }
      g["smallest_converging_warmup"] = warm;
      g["largest_stable_lr"] = stable;
      g["largest_non_diverging_lr"] = nondiv;
      g["divergence_rate"] = n ? static_cast<double>(div) / n : 0.0;
      g["cells"] = std::move(cj);
      by_group[{p, L}] = g;
      groups.push_back(std::move(g));
    }
  // ratios a/b
  Json ratios = Json::array();
  for (size_t a = 0; a < o.placements.size(); ++a)
    for (size_t b = a + 1; b < o.placements.size(); ++b)
      for (Index L : o.layers) {
        const Json& ga = by_group[{o.placements[a], L}];
        const Json& gb = by_group[{o.placements[b], L}];
        Json r;
        r["pair"] = o.placements[a] + "/" + o.placements[b];
        r["layers"] = L;
        Json wr = Json::object(), lr = Json::object();
        for (const auto& [k, v] : ga["smallest_converging_warmup"].items()) {
          const Json& u = gb["smallest_converging_warmup"][k];
          wr[k] = v.is_number() && u.is_number() && u.get<double>() > 0 ? Json(v.get<double>() / u.get<double>()) : Json(nullptr);
        }
        for (const auto& [k, v] : ga["largest_stable_lr"].items()) {
          const Json& u = gb["largest_stable_lr"][k];
          lr[k] = v.is_number() && u.is_number() ? Json(v.get<double>() / u.get<double>()) : Json(nullptr);
        }
        r["smallest_converging_warmup_ratio"] = wr;
        r["largest_stable_lr_ratio"] = lr;
        ratios.push_back(std::move(r));
      }
  rep["groups"] = std::move(groups);
  rep["ratios"] = std::move(ratios);
  rep["runs"] = std::move(rows);
  return rep;
}

std::string train_sweep_csv(const Json& rep) {
  std::ostringstream os;
  os << "placement,layers,warmup,lr,seed,loss_floor,final_eval_loss,final_train_loss,converged,diverged,diverged_step\n";
  auto f = [](const Json& v) {
    if (!v.is_number()) return std::string();
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v.get<double>());
    return std::string(buf);
  };
  for (const auto& r : rep["runs"])
    os << r["placement"].get<std::string>() << "," << r["layers"] << "," << r["warmup"] << "," << f(r["lr"]) << ","
       << r["seed"] << "," << f(r["loss_floor"]) << "," << f(r["final_eval_loss"]) << "," << f(r["final_train_loss"])
       << "," << (r["converged"].get<bool>() ? 1 : 0) << "," << (r["diverged"].is_null() ? 0 : 1) << ","
       << (r["diverged"].is_null() ? "" : r["diverged"]["step"].dump()) << "\n";
  return os.str();
}

void print_train_sweep_table(std::ostream& os, const Json& rep) {
  char buf[256];
  for (const auto& g : rep["groups"]) {
    std::snprintf(buf, sizeof buf, "%s L=%lld  divergence rate %.2f\n", g["placement"].get<std::string>().c_str(),
                  g["layers"].get<long long>(), g["divergence_rate"].get<double>());
    os << buf;
    os << "        lr  warmup  conv/runs  div  final eval loss (mean ± std)\n";
    for (const auto& c : g["cells"]) {
      std::snprintf(buf, sizeof buf, "  %8.3g  %6lld  %4d/%-4d  %3d  %.4f ± %.4f\n", c["lr"].get<double>(),
                    c["warmup"].get<long long>(), c["converged"].get<int>(), c["runs"].get<int>(), c["diverged"].get<int>(),
                    c["final_eval_loss_mean"].is_number() ? c["final_eval_loss_mean"].get<double>() : NAN,
                    c["final_eval_loss_std"].is_number() ? c["final_eval_loss_std"].get<double>() : NAN);
      os << buf;
    }
    os << "  smallest converging warmup per lr: " << g["smallest_converging_warmup"].dump() << "\n";
    os << "  largest stable lr per warmup:      " << g["largest_stable_lr"].dump() << "\n";
  }
  for (const auto& r : rep["ratios"])
    os << r["pair"].get<std::string>() << " L=" << r["layers"] << ": warmup ratio per lr "
       << r["smallest_converging_warmup_ratio"].dump() << ", stable-lr ratio per warmup "
       << r["largest_stable_lr_ratio"].dump() << "\n";
}

}  // namespace gradflow
