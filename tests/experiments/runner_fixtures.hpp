// runner_fixtures.hpp — the tiny real plan the runner and plan tests share (2 placements x 2 depths x 2 seeds,
// d = 8, n = 3: milliseconds each), and a report without its timings (which differ from run to run).
#pragma once
#include <string>
#include <vector>

#include "gradflow/experiments/plan.hpp"
#include "gradflow/run/options.hpp"

#include <nlohmann/json.hpp>

namespace gradflow::test {
// The configurations of `axes` for models of width d with `heads` heads on n tokens, in `mode` ("auto", ...).
inline std::vector<Configuration> plan_of(const PlanAxes& axes, Index d, Index heads, Index n,
                                          const std::string& mode = "auto") {
  return plan_configurations(axes, [&](const std::string& p, Index depth, const std::string&, const std::string&) {
    PointConfig pc;
    pc.rc.model.placement = p;
    pc.rc.model.layers = depth;
    pc.rc.model.d_model = d;
    pc.rc.model.heads = heads;
    pc.rc.analysis.seq_len = n;
    pc.rc.analysis.engine_request = parse_engine_request(mode, false);
    pc.rc.analysis.progress = false;
    pc.x = double(depth);
    return pc;
  });
}

inline std::vector<Configuration> tiny_plan(uint64_t base_seed = 0) {
  PlanAxes axes;
  axes.placements = {"post", "pre"};
  axes.depths = {2, 3};
  axes.seeds = 2;
  axes.base_seed = base_seed;
  return plan_of(axes, 8, 2, 3);
}

// The report without its timings (elapsed_seconds, timing_seconds, ...), which differ from run to run.
inline std::string without_timing(nlohmann::ordered_json j) {
  std::vector<std::string> timing;
  for (const auto& [k, v] : j.items())
    if (k.find("seconds") != std::string::npos || k.find("time") != std::string::npos) timing.push_back(k);
  for (const auto& k : timing) j.erase(k);
  return j.dump();
}

}  // namespace gradflow::test
