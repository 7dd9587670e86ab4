// train_csv.cpp — see train_csv.hpp.
#include "gradflow/train/train_csv.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace gradflow {
namespace {
using Json = nlohmann::ordered_json;

std::string fmt(const Json& v) {
  if (!v.is_number()) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v.get<double>());
  return buf;
}
}  // namespace

std::string train_csv(const Json& r) {
  std::ostringstream os;
  os << "step,layer,metric,value\n";
  for (const auto& e : r.at("log")) {
    const std::string s = std::to_string(e.at("step").get<long>());
    for (const char* k : {"train_loss", "eval_loss", "lr", "accuracy", "train_accuracy", "grad_norm_total",
                          "bottom_to_top_grad_ratio", "final_norm_input_rms"})
      if (e.contains(k)) os << s << ",," << k << "," << fmt(e[k]) << "\n";
    if (e.contains("update_ratios"))
      for (const auto& [g, v] : e["update_ratios"].items())
        if (g.rfind("layers.", 0) != 0) os << s << ",,update_ratio:" << g << "," << fmt(v) << "\n";
    const auto& layers = e.at("layers");
    for (size_t l = 0; l < layers.size(); ++l) {
      const auto& L = layers[l];
      os << s << "," << l << ",grad_norm," << fmt(L.at("grad_norm")) << "\n";
      if (L.contains("update_ratio")) os << s << "," << l << ",update_ratio," << fmt(L["update_ratio"]) << "\n";
      for (const auto& [n, v] : L.at("param_grad_norms").items())
        os << s << "," << l << ",param_grad_norm:" << n << "," << fmt(v) << "\n";
      if (L.contains("norm_input_rms"))
        for (const auto& [n, v] : L["norm_input_rms"].items())
          os << s << "," << l << ",norm_input_rms:" << n << "," << fmt(v) << "\n";
    }
  }
  return os.str();
}

void print_train_summary(std::ostream& os, const Json& r) {
  const auto& c = r.at("config");
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s L=%lld d=%lld task=%s (floor %.4f)  lr=%g warmup=%lld %s\n",
                c.at("placement").get<std::string>().c_str(), c.at("layers").get<long long>(),
                c.at("d_model").get<long long>(), r.at("task").at("name").get<std::string>().c_str(),
                r.at("task").at("loss_floor").get<double>(), c.at("lr").get<double>(), c.at("warmup").get<long long>(),
                c.at("schedule").get<std::string>().c_str());
  os << buf;
  os << "  step    train_loss   eval_loss  accuracy   ||dL/dx_0||/||dL/dx_top||\n";
  for (const auto& e : r.at("log")) {
    auto d = [](const Json& v) { return v.is_number() ? v.get<double>() : NAN; };
    std::snprintf(buf, sizeof buf, "%6ld  %12.5f  %10.5f  %8.4f   %.4g\n", e.at("step").get<long>(), d(e["train_loss"]),
                  d(e["eval_loss"]), d(e["accuracy"]), d(e["bottom_to_top_grad_ratio"]));
    os << buf;
  }
  if (!r.at("diverged").is_null()) os << "DIVERGED: " << r["diverged"].dump() << "\n";
  std::snprintf(buf, sizeof buf, "%.1f s, %.1f updates/s\n", r.at("elapsed_seconds").get<double>(),
                r["timing_seconds"]["updates_per_second"].is_number() ? r["timing_seconds"]["updates_per_second"].get<double>() : 0.0);
  os << buf;
}

}  // namespace gradflow
