// train_csv.cpp — see train_csv.hpp.
#include "gradflow/train/train_csv.hpp"

#include <cmath>
#include <cstdio>

#include "gradflow/experiments/csv_writer.hpp"
#include "gradflow/report/fields.hpp"

namespace gradflow {
namespace {
using Json = nlohmann::ordered_json;
using namespace fields;

// The log entry's scalars, in the CSV's order (those the entry holds).
const char* const kLogScalars[] = {kTrainLoss,    kEvalLoss,      kLr, kAccuracy, kTrainAccuracy, kGradNormTotal,
                                   kBottomToTopGradRatio, kFinalNormInputRms};

// "param_grad_norm:linear2.weight": a metric with its parameter (or parameter group).
std::string named(const char* metric, const std::string& name) { return std::string(metric) + ":" + name; }
}  // namespace

std::string train_csv(const Json& r) {
  CsvWriter out({kStep, csv::kLayer, csv::kMetric, csv::kValue});
  for (const auto& e : r.at(kLog)) {
    const std::string s = std::to_string(e.at(kStep).get<long>());
    for (const char* k : kLogScalars)
      if (e.contains(k)) out.row({s, "", k, csv_number(e[k], "")});
    if (e.contains(kUpdateRatios))
      for (const auto& [g, v] : e[kUpdateRatios].items())
        if (g.rfind("layers.", 0) != 0) out.row({s, "", named(kUpdateRatio, g), csv_number(v, "")});
    const auto& layers = e.at(kLayers);
    for (size_t l = 0; l < layers.size(); ++l) {
      const auto& L = layers[l];
      const std::string li = std::to_string(l);
      out.row({s, li, kGradNorm, csv_number(L.at(kGradNorm), "")});
      if (L.contains(kUpdateRatio)) out.row({s, li, kUpdateRatio, csv_number(L[kUpdateRatio], "")});
      for (const auto& [n, v] : L.at(kParamGradNorms).items())
        out.row({s, li, named(csv::kParamGradNorm, n), csv_number(v, "")});
      if (L.contains(kNormInputRms))
        for (const auto& [n, v] : L[kNormInputRms].items()) out.row({s, li, named(kNormInputRms, n), csv_number(v, "")});
    }
  }
  return out.str();
}

void print_train_summary(std::ostream& os, const Json& r) {
  const auto& c = r.at(kConfig);
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s L=%lld d=%lld task=%s (floor %.4f)  lr=%g warmup=%lld %s\n",
                c.at(kPlacement).get<std::string>().c_str(), c.at(kLayers).get<long long>(),
                c.at(kDModel).get<long long>(), r.at(kTask).at(kName).get<std::string>().c_str(),
                r.at(kTask).at(kLossFloor).get<double>(), c.at(kLr).get<double>(), c.at(kWarmup).get<long long>(),
                c.at(kSchedule).get<std::string>().c_str());
  os << buf;
  os << "  step    train_loss   eval_loss  accuracy   ||dL/dx_0||/||dL/dx_top||\n";
  for (const auto& e : r.at(kLog)) {
    auto d = [](const Json& v) { return v.is_number() ? v.get<double>() : NAN; };
    std::snprintf(buf, sizeof buf, "%6ld  %12.5f  %10.5f  %8.4f   %.4g\n", e.at(kStep).get<long>(), d(e[kTrainLoss]),
                  d(e[kEvalLoss]), d(e[kAccuracy]), d(e[kBottomToTopGradRatio]));
    os << buf;
  }
  if (!r.at(kDiverged).is_null()) os << "DIVERGED: " << r[kDiverged].dump() << "\n";
  std::snprintf(buf, sizeof buf, "%.1f s, %.1f updates/s\n", r.at("elapsed_seconds").get<double>(),
                r["timing_seconds"]["updates_per_second"].is_number() ? r["timing_seconds"]["updates_per_second"].get<double>() : 0.0);
  os << buf;
}

}  // namespace gradflow
