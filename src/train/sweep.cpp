// sweep.cpp — see sweep.hpp. The parallel loop and the --resume files are src/experiments/runner.cpp's
// (run_resumable): a worker runs one training (its batch loop on the worker's share of the threads, share_threads)
// and writes {"configuration", "report"} atomically.
#include "gradflow/train/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "gradflow/core/error.hpp"
#include "gradflow/experiments/aggregate.hpp"
#include "gradflow/experiments/statistics.hpp"
#include "gradflow/experiments/csv_writer.hpp"
#include "gradflow/experiments/runner.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/report/finite_json.hpp"
#include "gradflow/report/number_text.hpp"

namespace gradflow {
using Json = nlohmann::ordered_json;
using namespace fields;

std::string TrainRun::file_name() const {
  return placement + (d_model > 0 ? "_d" + std::to_string(d_model) : std::string()) + "_L" + std::to_string(layers) + "_w" + std::to_string(warmup) + "_lr" + number_text(lr) + "_s" +
         std::to_string(repetition) + ".json";
}

std::vector<TrainRun> plan_train_runs(const TrainSweepOptions& o,
                                      const std::function<TrainConfig(const std::string&, Index, Index)>& make) {
  require(!o.placements.empty() && !o.layers.empty() && !o.warmups.empty() && !o.lrs.empty(),
          "train-sweep needs at least one placement, depth, warmup and learning rate; fix: e.g. --placements post,pre "
          "--layers 6 --warmup 0,100 --lr 1e-3");
  require(o.seeds >= 1, "--seeds must be >= 1 (got " + std::to_string(o.seeds) + "); fix: e.g. --seeds 3");
  require(o.converge_margin > 0 && std::isfinite(o.converge_margin), "--converge-margin must be > 0; fix: e.g. 0.05");
  for (size_t i = 0; i < o.widths.size(); ++i)
    for (size_t j = i + 1; j < o.widths.size(); ++j)
      require(o.widths[i] != o.widths[j], "--d-model lists the width " + std::to_string(o.widths[i]) +
                                              " twice; fix: each width once, e.g. --d-model 32,64,128");
  std::vector<TrainRun> runs;
  const std::vector<Index> widths = o.widths.empty() ? std::vector<Index>{0} : o.widths;
  for (const auto& p : o.placements)
    for (Index d : widths)
    for (Index L : o.layers) {
      const TrainConfig base = make(p, L, d);
      for (double lr : o.lrs)
        for (long w : o.warmups)
          for (int r = 0; r < o.seeds; ++r) {
            TrainRun run;
            run.placement = p;
            run.d_model = d;
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

std::vector<Json> run_train_runs(const std::vector<TrainRun>& runs, const TrainSweepOptions& o, RunnerStats* stats) {
  const auto jobs = resumable_jobs(
      runs, [](const TrainRun& r) { return train_config_json(r.tc); },
      [](const TrainRun& r) {
        TrainConfig tc = r.tc;
        tc.threads = 0;  // the worker's share of the threads (runner.hpp)
        return train(tc);
      });
  const auto describe = [](const Json& r) {
    char buf[64];
    const bool has = r.is_object() && r[kFinal][kEvalLoss].is_number();
    std::snprintf(buf, sizeof buf, "  eval %.4f", has ? r[kFinal][kEvalLoss].get<double>() : NAN);
    return std::string(buf) + (r.is_object() && !r[kDiverged].is_null() ? " diverged" : "");
  };
  // runs side by side, each on its share of the threads: the largest run's memory on the largest share times the
  // runs that run at once (a plan: one run, each task at least; a merge runs nothing). With fewer runs left to do (a
  // resume) fewer run at once on larger shares, which this bounds too: a run's memory grows by one gradient and
  // trace copy per thread.
  if (!runs.empty() && o.plan.kind != PlanStep::Kind::Merge) {
    const ThreadShare share = share_threads(o.threads, static_cast<int>(runs.size()), false);
    const long side_by_side = o.plan.kind == PlanStep::Kind::Write ? 1 : share.side_by_side;
    MemoryEstimate largest = train_memory(runs[0].tc, share.most());
    for (const auto& r : runs)
      if (MemoryEstimate m = train_memory(r.tc, share.most()); m.total() > largest.total()) largest = std::move(m);
    MemoryEstimate all;
    for (const auto& p : largest.parts)
      all.add(p.what + " x " + std::to_string(side_by_side) + " runs", p.bytes * static_cast<double>(side_by_side));
    require_memory(all, runs[0].tc.max_memory_bytes, "train-sweep (" + std::to_string(side_by_side) + " runs at once)",
                   "use fewer --threads (runs at once), smaller models, or raise --max-memory");
  }
  RunnerOptions ro;
  ro.threads = o.threads;
  ro.resume_dir = o.resume_dir;
  ro.progress = o.progress;
  ro.plan = o.plan;
  return run_resumable(jobs, ro, "run", describe, stats);
}

Json train_sweep_report(const TrainSweepOptions& o, const std::vector<TrainRun>& runs, const std::vector<Json>& reports) {
  Json rep;
  Json spec;
  const bool by_width = !o.widths.empty();
  const std::vector<Index> widths = by_width ? o.widths : std::vector<Index>{0};
  spec[kPlacements] = o.placements;
  if (by_width) spec[kDModel] = o.widths;
  spec[kLayers] = o.layers;
  spec[kWarmup] = o.warmups;
  spec[kLr] = o.lrs;
  spec[kSeeds] = o.seeds;
  spec["converge_margin"] = o.converge_margin;
  rep[kGrid] = spec;
  Json& config = rep[kConfig] = runs.empty() ? Json() : train_config_json(runs[0].tc);
  for (const char* swept : {kLr, kWarmup, kPlacement, kLayers}) config.erase(swept);
  if (by_width) config.erase(kDModel);
  config[kBaseSeed] = runs.empty() ? 0 : runs[0].tc.init.seed;
  config.erase(kSeed);
  rep["definitions"] = Json{
      {kConverged, "not diverged and final eval loss <= loss_floor + converge_margin"},
      {kDiverged, "NaN/Inf in activations, gradients or loss, an activation above diverge_activation, or a train loss above diverge_loss, at any step"},
      {"cell_converges", by_width ? "every seed of the (placement, d_model, layers, lr, warmup) cell converged"
                                  : "every seed of the (placement, layers, lr, warmup) cell converged"},
      {kLargestStableLr, "largest lr whose cell converges at that warmup"},
      {kSmallestConvergingWarmup, "smallest warmup whose cell converges at that lr"},
      {"seed_rule", "repetition r runs with seed = base_seed + r (weights and batches); eval set from seed + 1000003"}};
  // per run
  Json rows = Json::array();
  struct Cell {
    std::vector<double> finals;
    int n = 0, conv = 0, div = 0;
    std::map<long, std::vector<double>> curve;  // step -> eval losses
  };
  std::map<std::tuple<std::string, Index, Index, double, long>, Cell> cells;  // (placement, width, depth, lr, warmup)
  // (placement, width, depth, warmup, repetition) -> lr -> final eval loss (NaN: diverged or none)
  std::map<std::tuple<std::string, Index, Index, long, int>, std::map<double, double>> per_seed;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = reports[i];
    const auto& run = runs[i];
    const double floor = r[kTask][kLossFloor].get<double>();
    const double fe = r[kFinal][kEvalLoss].is_number() ? r[kFinal][kEvalLoss].get<double>() : NAN;
    const bool div = !r[kDiverged].is_null();
    const bool conv = !div && std::isfinite(fe) && fe <= floor + o.converge_margin;
    Json row;
    row[kPlacement] = run.placement;
    if (by_width) row[kDModel] = run.d_model;
    row[kLayers] = run.layers;
    row[kWarmup] = run.warmup;
    row[kLr] = run.lr;
    row[kSeed] = run.tc.init.seed;
    row[kLossFloor] = floor;
    row[kFinalEvalLoss] = finite_or_null(fe);
    row[kFinalTrainLoss] = r[kFinal][kTrainLoss];
    row[kConverged] = conv;
    row[kDiverged] = r[kDiverged];
    Json curve = Json::array();
    auto& cell = cells[{run.placement, run.d_model, run.layers, run.lr, run.warmup}];
    for (const auto& e : r[kLog]) {
      Json g = Json::array();
      for (const auto& l : e[kLayers]) g.push_back(l[kGradNorm]);
      curve.push_back(Json{{kStep, e[kStep]}, {kTrainLoss, e[kTrainLoss]}, {kEvalLoss, e[kEvalLoss]},
                           {kBottomToTopGradRatio, e[kBottomToTopGradRatio]}, {kGradNorms, g}});
      if (e[kEvalLoss].is_number()) cell.curve[e[kStep].get<long>()].push_back(e[kEvalLoss].get<double>());
    }
    row[kCurve] = std::move(curve);
    rows.push_back(std::move(row));
    per_seed[{run.placement, run.d_model, run.layers, run.warmup, run.repetition}][run.lr] = div ? NAN : fe;
    ++cell.n;
    cell.conv += conv;
    cell.div += div;
    if (std::isfinite(fe)) cell.finals.push_back(fe);
  }
  // per (placement, width, depth)
  Json groups = Json::array();
  std::map<std::tuple<std::string, Index, Index>, Json> by_group;
  for (const auto& p : o.placements)
    for (Index d : widths)
    for (Index L : o.layers) {
      Json g;
      g[kPlacement] = p;
      if (by_width) g[kDModel] = d;
      g[kLayers] = L;
      Json cj = Json::array();
      int n = 0, div = 0;
      Json warm = Json::object(), stable = Json::object(), nondiv = Json::object();
      for (double lr : o.lrs) {
        Json best = nullptr;
        for (long w : o.warmups) {
          const Cell& c = cells[{p, d, L, lr, w}];
          n += c.n;
          div += c.div;
          Json mc = Json::array();
          for (const auto& [s, v] : c.curve) mc.push_back(Json{s, mean_std(v).mean});
          const Stat fin = mean_std(c.finals);  // std null, not 0, when no run of the cell has a final loss
          const Interval rate = proportion_interval(c.div, c.n), loss = mean_interval(c.finals);
          cj.push_back(Json{{kLr, lr}, {kWarmup, w}, {kRuns, c.n}, {kConverged, c.conv}, {kDiverged, c.div},
                            {kDivergenceRate, c.n ? Json(static_cast<double>(c.div) / c.n) : Json()},
                            {"divergence_rate_ci_low", finite_or_null(rate.low)},
                            {"divergence_rate_ci_high", finite_or_null(rate.high)},
                            {kFinalEvalLossMean, finite_or_null(fin.mean)}, {kFinalEvalLossStd, finite_or_null(fin.n ? fin.std : NAN)},
                            {"final_eval_loss_ci_low", finite_or_null(loss.low)},
                            {"final_eval_loss_ci_high", finite_or_null(loss.high)},
                            {kMeanEvalCurve, mc}});
          if (best.is_null() && c.n > 0 && c.conv == c.n) best = w;  // (n = 0: a partial merge lacks the cell)
        }
        warm[number_text(lr)] = best;
      }
      for (long w : o.warmups) {
        Json best = nullptr, best_nd = nullptr;
        for (double lr : o.lrs) {
          const Cell& c = cells[{p, d, L, lr, w}];
          if (c.n == 0) continue;  // a partial merge lacks the cell
          if (c.conv == c.n && (best.is_null() || lr > best.get<double>())) best = lr;
          if (c.div == 0 && (best_nd.is_null() || lr > best_nd.get<double>())) best_nd = lr;
        }
        stable[std::to_string(w)] = best;
        nondiv[std::to_string(w)] = best_nd;
      }
      Json optimal = Json::object();
      for (long w : o.warmups) {
        std::vector<double> log2_lr;
        int fitted_at_edge = 0;
        for (int rep = 0; rep < o.seeds; ++rep) {
          const auto it = per_seed.find({p, d, L, w, rep});
          if (it == per_seed.end()) continue;  // a partial merge lacks the seed
          std::vector<double> lrs, losses;
          for (const auto& [lr, fe] : it->second) {
            lrs.push_back(lr);
            losses.push_back(fe);
          }
          const double best = fitted_optimal_lr(lrs, losses);
          if (std::isfinite(best)) log2_lr.push_back(std::log2(best));
          else ++fitted_at_edge;
        }
        const Stat st = mean_std(log2_lr);
        const double se = log2_lr.size() >= 2 ? st.std / std::sqrt(static_cast<double>(log2_lr.size())) : NAN;
        const Interval log2_ci = mean_interval(log2_lr);
        optimal[std::to_string(w)] =
            Json{{kLr, log2_lr.empty() ? Json(nullptr) : Json(std::exp2(st.mean))},
                 {"log2_lr_mean", finite_or_null(log2_lr.empty() ? NAN : st.mean)},
                 {"log2_lr_stderr", finite_or_null(se)},
                 {"log2_lr_ci_low", finite_or_null(log2_ci.low)}, {"log2_lr_ci_high", finite_or_null(log2_ci.high)},
                 {"seeds_fitted", log2_lr.size()},
                 {"seeds_without_inner_minimum", fitted_at_edge}};
      }
      g["optimal_lr"] = std::move(optimal);
      g[kSmallestConvergingWarmup] = warm;
      g[kLargestStableLr] = stable;
      g[kLargestNonDivergingLr] = nondiv;
      g[kDivergenceRate] = n ? Json(static_cast<double>(div) / n) : Json();  // (none: a partial merge lacks the group)
      g[kCells] = std::move(cj);
      by_group[{p, d, L}] = g;
      groups.push_back(std::move(g));
    }
  // ratios a/b
  Json ratios = Json::array();
  for (size_t a = 0; a < o.placements.size(); ++a)
    for (size_t b = a + 1; b < o.placements.size(); ++b)
      for (Index d : widths)
      for (Index L : o.layers) {
        const Json& ga = by_group[{o.placements[a], d, L}];
        const Json& gb = by_group[{o.placements[b], d, L}];
        Json r;
        r[kPair] = o.placements[a] + "/" + o.placements[b];
        if (by_width) r[kDModel] = d;
        r[kLayers] = L;
        Json wr = Json::object(), lr = Json::object();
        for (const auto& [k, v] : ga[kSmallestConvergingWarmup].items()) {
          const Json& u = gb[kSmallestConvergingWarmup][k];
          wr[k] = v.is_number() && u.is_number() && u.get<double>() > 0 ? Json(v.get<double>() / u.get<double>()) : Json(nullptr);
        }
        for (const auto& [k, v] : ga[kLargestStableLr].items()) {
          const Json& u = gb[kLargestStableLr][k];
          lr[k] = v.is_number() && u.is_number() ? Json(v.get<double>() / u.get<double>()) : Json(nullptr);
        }
        r[kSmallestConvergingWarmupRatio] = wr;
        r[kLargestStableLrRatio] = lr;
        ratios.push_back(std::move(r));
      }
  rep[kGroups] = std::move(groups);
  rep[kRatios] = std::move(ratios);
  rep[kRuns] = std::move(rows);
  return rep;
}

double fitted_optimal_lr(const std::vector<double>& lrs, const std::vector<double>& losses) {
  std::vector<std::pair<double, double>> pts;  // (log2 lr, loss), ascending in lr
  for (size_t i = 0; i < lrs.size() && i < losses.size(); ++i) pts.push_back({std::log2(lrs[i]), losses[i]});
  std::sort(pts.begin(), pts.end());
  size_t k = pts.size();
  for (size_t i = 0; i < pts.size(); ++i)
    if (std::isfinite(pts[i].second) && (k == pts.size() || pts[i].second < pts[k].second)) k = i;
  if (k == pts.size() || k == 0 || k + 1 == pts.size()) return NAN;
  const auto [u0, y0] = pts[k - 1];
  const auto [u1, y1] = pts[k];
  const auto [u2, y2] = pts[k + 1];
  if (!std::isfinite(y0) || !std::isfinite(y2)) return NAN;
  // the vertex of the parabola through the three points (y1 lowest, so it lies in [u0, u2])
  const double a = (y0 - y1) / (u0 - u1), b = (y2 - y1) / (u2 - u1);
  const double curvature = (b - a) / (u2 - u0);  // the parabola's leading coefficient
  if (!(curvature > 0)) return std::exp2(u1);     // flat through the three: the grid point itself
  const double slope_mid = a + curvature * (u1 - u0);  // derivative at u1 of the interpolating parabola
  return std::exp2(u1 - slope_mid / (2 * curvature));
}

std::string train_sweep_csv(const Json& rep) {
  const bool by_width = rep.contains(kGrid) && rep[kGrid].contains(kDModel);
  std::vector<std::string> columns{kPlacement, kLayers, kWarmup, kLr, kSeed, kLossFloor, kFinalEvalLoss,
                                   kFinalTrainLoss, kConverged, kDiverged, csv::kDivergedStep};
  if (by_width) columns.insert(columns.begin() + 1, kDModel);
  CsvWriter out(columns);
  for (const auto& r : rep[kRuns]) {
    const bool diverged = !r[kDiverged].is_null();
    std::vector<std::string> cells{csv_text(r[kPlacement].get<std::string>()), r[kLayers].dump(), r[kWarmup].dump(), csv_number(r[kLr], ""),
             r[kSeed].dump(), csv_number(r[kLossFloor], ""), csv_number(r[kFinalEvalLoss], ""),
             csv_number(r[kFinalTrainLoss], ""), r[kConverged].get<bool>() ? "1" : "0", diverged ? "1" : "0",
             diverged ? r[kDiverged][kStep].dump() : ""};
    if (by_width) cells.insert(cells.begin() + 1, r[kDModel].dump());
    out.row(cells);
  }
  return out.str();
}

namespace {

// A summary map {key: value or null} as one readable line: "lr 0.001: 100, lr 0.01: none" (the report's JSON keeps
// null; `none` says what it means there).
std::string keyed_text(const Json& m, const std::string& key, const std::string& none) {
  std::string s;
  for (const auto& [k, v] : m.items())
    s += (s.empty() ? "" : ", ") + key + " " + k + ": " + (v.is_number() ? number_text(v.get<double>()) : none);
  return s.empty() ? "-" : s;
}

}  // namespace

void print_train_sweep_table(std::ostream& os, const Json& rep) {
  char buf[256];
  for (const auto& g : rep[kGroups]) {
    const std::string width = g.contains(kDModel) ? " d=" + g[kDModel].dump() : "";
    std::snprintf(buf, sizeof buf, "%s%s L=%lld  divergence rate %.2f\n", g[kPlacement].get<std::string>().c_str(),
                  width.c_str(), g[kLayers].get<long long>(),
                  g[kDivergenceRate].is_number() ? g[kDivergenceRate].get<double>() : NAN);
    os << buf;
    os << "        lr  warmup  conv/runs  div  final eval loss (mean ± std)\n";
    for (const auto& c : g[kCells]) {
      std::snprintf(buf, sizeof buf, "  %8.3g  %6lld  %4d/%-4d  %3d  %.4f ± %.4f\n", c[kLr].get<double>(),
                    c[kWarmup].get<long long>(), c[kConverged].get<int>(), c[kRuns].get<int>(), c[kDiverged].get<int>(),
                    c[kFinalEvalLossMean].is_number() ? c[kFinalEvalLossMean].get<double>() : NAN,
                    c[kFinalEvalLossStd].is_number() ? c[kFinalEvalLossStd].get<double>() : NAN);
      os << buf;
    }
    os << "  smallest converging warmup: " << keyed_text(g[kSmallestConvergingWarmup], "lr", "none converges") << "\n";
    os << "  largest stable lr:          " << keyed_text(g[kLargestStableLr], "warmup", "none converges") << "\n";
  }
  for (const auto& r : rep[kRatios]) {
    os << r[kPair].get<std::string>() << (r.contains(kDModel) ? " d=" + r[kDModel].dump() : std::string()) << " L="
       << r[kLayers] << ": warmup ratio "
       << keyed_text(r[kSmallestConvergingWarmupRatio], "lr", "n/a") << "; stable-lr ratio "
       << keyed_text(r[kLargestStableLrRatio], "warmup", "n/a") << "\n";
  }
  if (!rep[kRatios].empty())
    os << "(n/a: a placement has no converging cell there, or its warmup is 0)\n";
}

}  // namespace gradflow
