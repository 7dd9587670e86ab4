// coord_check.cpp — see coord_check.hpp.
#include "gradflow/train/coord_check.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "gradflow/core/error.hpp"
#include "gradflow/report/finite_json.hpp"

namespace gradflow {
namespace {

using Json = nlohmann::ordered_json;

// The quantities of a log entry that a verdict is given for: the means over the blocks, and the output logits.
const std::vector<std::string>& block_quantities() {
  static const std::vector<std::string> q = {"stream", "attn_branch", "ffn_branch", "attn_logits"};
  return q;
}

double mean_of(const Json& per_block) {
  double s = 0;
  int k = 0;
  for (const auto& v : per_block) {
    if (!v.is_number()) return NAN;
    s += v.get<double>();
    ++k;
  }
  return k > 0 ? s / k : NAN;
}

// x · num / den, which must be a whole number (a width scaled with d)
Index scaled(Index x, Index num, Index den, const std::string& option) {
  require((x * num) % den == 0, "--widths: " + option + " " + std::to_string(x) + " scaled to width " +
                                    std::to_string(num) + " (from --d-model " + std::to_string(den) +
                                    ") is not a whole number; fix: choose widths that are multiples of --d-model / "
                                    "gcd, or drop " + option);
  return x * num / den;
}

TrainConfig at_width(const TrainConfig& base, Index w) {
  TrainConfig t = base;
  const Index d = base.model.d_model;
  t.model.d_model = w;
  if (base.model.d_ff > 0) t.model.d_ff = scaled(base.model.d_ff, w, d, "--d-ff");
  if (base.model.head_dim > 0) t.model.head_dim = scaled(base.model.head_dim, w, d, "--head-dim");
  return t;
}

std::vector<Index> checked_sizes(std::vector<Index> v, const std::string& option) {
  std::sort(v.begin(), v.end());
  require(std::adjacent_find(v.begin(), v.end()) == v.end(), option + " lists a value twice; fix: list each once");
  require(v.empty() || v.size() >= 2, option + " needs at least two values to fit a growth exponent; fix: e.g. " +
                                          option + " 64,128,256");
  for (Index x : v) require(x > 0, option + " values must be positive; fix: e.g. " + option + " 64,128,256");
  return v;
}

}  // namespace

double ls_slope(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t m = x.size();
  if (m < 2 || y.size() != m) return NAN;
  double mx = 0, my = 0;
  for (size_t i = 0; i < m; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= static_cast<double>(m);
  my /= static_cast<double>(m);
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < m; ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  return sxx > 0 ? sxy / sxx : NAN;
}

CoordCheckConfig resolve_coord_check(CoordCheckConfig c) {
  c.widths = checked_sizes(c.widths, "--widths");
  c.depths = checked_sizes(c.depths, "--depths");
  require(!c.widths.empty() || !c.depths.empty(), "coord-check needs --widths or --depths (or both); fix: e.g. "
                                                  "--widths 64,128,256,512");
  require(c.seeds >= 1, "--seeds must be >= 1; fix: e.g. --seeds 3");
  require(c.band > 0 && std::isfinite(c.band), "--band must be a positive number; fix: e.g. --band 0.25");
  require(c.base.steps >= 1, "--steps must be >= 1; fix: e.g. --steps 5");
  require(!c.base.weights, "coord-check trains fresh models at every size; fix: drop --weights");
  Parametrization& p = c.base.model.param;
  if (p.scales_width() && p.base_width == 0) p.base_width = c.widths.empty() ? c.base.model.d_model : c.widths.front();
  if (p.scales_depth() && p.base_depth == 0) p.base_depth = c.depths.empty() ? c.base.model.layers : c.depths.front();
  c.base.log_every = 1;
  c.base.eval_size = 1;  // the eval loss is not part of the check
  c.base.save_every = 0;
  c.base.save_batches = false;
  c.base.coord_stats = true;
  c.base.progress = false;
  // a width or depth of the lists that the model refuses is named as the list's item, not as --d-model or --layers
  // (which the user may have given otherwise, or not at all)
  const auto at = [](const std::string& item, const std::function<void()>& check) {
    try {
      check();
    } catch (const Error& e) {
      throw Error(item + ": " + e.what(), e.kind());
    }
  };
  for (Index w : c.widths)
    at("--widths item " + std::to_string(w), [&] { validate_train(at_width(c.base, w)); });
  for (Index L : c.depths) {
    TrainConfig t = c.base;
    t.model.layers = L;
    at("--depths item " + std::to_string(L), [&] { validate_train(t); });
  }
  return c;
}

Json coord_check(const CoordCheckConfig& c0) {
  const CoordCheckConfig c = resolve_coord_check(c0);
  const auto start = std::chrono::steady_clock::now();
  const long T = c.base.steps;
  Json report;
  Json cfg = train_config_json(c.base);
  cfg["coord_check"] = Json{{"widths", c.widths}, {"depths", c.depths}, {"seeds", c.seeds}, {"band", c.band},
                            {"records", "t = 1..steps: before update t (t = 1: at initialization)"}};
  report["config"] = cfg;
  report["axes"] = Json::array();
  for (const std::string axis : {"width", "depth"}) {
    const std::vector<Index>& sizes = axis == "width" ? c.widths : c.depths;
    if (sizes.empty()) continue;
    // value[quantity][t-1][seed][size index]
    std::map<std::string, std::vector<std::vector<std::vector<double>>>> value;
    std::vector<std::string> order = block_quantities();
    order.push_back("output_logits");
    const auto slot = [&](const std::string& q) -> auto& {
      auto& v = value[q];
      if (v.empty()) {
        v.assign(static_cast<size_t>(T), std::vector<std::vector<double>>(static_cast<size_t>(c.seeds),
                                                                          std::vector<double>(sizes.size(), NAN)));
        if (std::find(order.begin(), order.end(), q) == order.end()) order.push_back(q);
      }
      return v;
    };
    Json records = Json::array();
    for (size_t k = 0; k < sizes.size(); ++k)
      for (int seed = 0; seed < c.seeds; ++seed) {
        TrainConfig t = axis == "width" ? at_width(c.base, sizes[k]) : c.base;
        if (axis == "depth") t.model.layers = sizes[k];
        t.init.seed = c.base.init.seed + static_cast<uint64_t>(seed);
        const Json run = train(t);
        Json steps = Json::array();
        for (const auto& e : run["log"]) {
          const long s = e["step"].get<long>();
          if (s >= T) break;
          const Json& co = e["coords"];
          Json rec{{"t", s + 1}};
          for (const auto& q : block_quantities()) {
            const double v = mean_of(co[q]);
            slot(q)[static_cast<size_t>(s)][static_cast<size_t>(seed)][k] = v;
            rec[q] = finite_or_null(v);
          }
          const double out = co["output_logits"].is_number() ? co["output_logits"].get<double>() : NAN;
          slot("output_logits")[static_cast<size_t>(s)][static_cast<size_t>(seed)][k] = out;
          rec["output_logits"] = finite_or_null(out);
          if (e.contains("update_ratios_by_role"))
            for (const auto& [role, v] : e["update_ratios_by_role"].items()) {
              const double u = v.is_number() ? v.get<double>() : NAN;
              slot("update:" + role)[static_cast<size_t>(s)][static_cast<size_t>(seed)][k] = u;
            }
          rec["update_ratios_by_role"] = e.value("update_ratios_by_role", Json::object());
          rec["per_block"] = co;
          steps.push_back(std::move(rec));
        }
        records.push_back(Json{{"size", sizes[k]}, {"seed", t.init.seed}, {"diverged", run["diverged"]},
                               {"steps", std::move(steps)}});
      }
    std::vector<double> lx;
    for (Index s : sizes) lx.push_back(std::log2(static_cast<double>(s)));
    Json verdicts = Json::array(), summary = Json::object();
    for (const auto& q : order) {
      bool grows = false, any = false;
      double worst = NAN;
      for (long t = 0; t < T; ++t) {
        std::vector<double> b;  // per seed
        for (int seed = 0; seed < c.seeds; ++seed) {
          const auto& v = value[q][static_cast<size_t>(t)][static_cast<size_t>(seed)];
          std::vector<double> ly;
          for (double x : v) ly.push_back(x > 0 && std::isfinite(x) ? std::log2(x) : NAN);
          const double slope = std::all_of(ly.begin(), ly.end(), [](double y) { return std::isfinite(y); })
                                    ? ls_slope(lx, ly) : NAN;
          if (std::isfinite(slope)) b.push_back(slope);
        }
        double mean = NAN, se = NAN;
        if (!b.empty()) {
          mean = 0;
          for (double x : b) mean += x;
          mean /= static_cast<double>(b.size());
          if (b.size() >= 2) {
            double ss = 0;
            for (double x : b) ss += (x - mean) * (x - mean);
            se = std::sqrt(ss / static_cast<double>(b.size() - 1) / static_cast<double>(b.size()));
          }
        }
        std::string verdict = "unknown";
        if (std::isfinite(mean)) {
          verdict = mean > c.band ? "grows" : mean < -c.band ? "shrinks" : "stable";
          grows = grows || mean > c.band;
          any = true;
          if (!std::isfinite(worst) || mean > worst) worst = mean;
        }
        verdicts.push_back(Json{{"quantity", q}, {"t", t + 1}, {"exponent", finite_or_null(mean)},
                                {"stderr", finite_or_null(se)}, {"seeds_fitted", b.size()}, {"verdict", verdict}});
      }
      summary[q] = Json{{"largest_exponent", finite_or_null(worst)},
                        {"verdict", !any ? "unknown" : grows ? "grows" : "stable or shrinks"}};
    }
    report["axes"].push_back(Json{{"axis", axis}, {"sizes", sizes}, {"records", std::move(records)},
                                  {"verdicts", std::move(verdicts)}, {"summary", std::move(summary)}});
  }
  report["timing"] = Json{{"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()}};
  return report;
}

}  // namespace gradflow
