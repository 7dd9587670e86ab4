// plan.hpp — an experiment (compare or sweep) as a flat, ordered list of configurations:
// placements × depths × values of one swept parameter [× values of a second one] × seed repetitions, each a full
// RunConfig.
// Seeds: repetition r (0-based) of every configuration runs with seed = base_seed + r, so repetition 0 is exactly
// `gradflow analyze --seed BASE` with the same options, and every placement, depth and value shares the seeds.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gradflow/run/analyze.hpp"

namespace gradflow {

// Seed of repetition r of any configuration: base + r (the one documented rule).
uint64_t repetition_seed(uint64_t base_seed, int repetition);

struct PlanAxes {
  std::vector<std::string> placements;  // --placements post,pre (sweep: --placement, one or more)
  std::vector<Index> depths;            // --layers 6,12,24
  std::string param;                    // swept parameter ("" for compare): init-scale, layers, d-model, ...
  std::vector<std::string> values;      // its values as given, e.g. "1", "0.5", "inv-sqrt-2L"
  std::string param2;                   // a second swept parameter ("" for none): a 2-D sweep (phase diagram)
  std::vector<std::string> values2;     // its values as given
  int seeds = 3;                        // repetitions per configuration
  uint64_t base_seed = 0;               // --seed
};

struct Configuration {
  std::string placement;
  Index depth = 0;          // the model's layers after the swept value is applied
  std::string value;        // swept value as given ("" in compare)
  double x = 0;             // swept value as a number (NaN when not numeric, e.g. --param init)
  std::string value2;       // the second swept parameter's value as given ("" without --param2)
  double x2 = 0;            // that value as a number (NaN when not numeric)
  int group = 0;            // index of its (placement, depth, value, value2) group, in plan order
  int repetition = 0;       // r: seed = base + r
  RunConfig rc;
  // for --resume and plan tasks: "post_L24_s3.json", "post_L24_0.5_s3.json" (sweep), "post_L24_0.5_0.1_s3.json"
  // (2-D sweep): the values as given, characters outside [A-Za-z0-9._=-] replaced by '-'
  std::string file_name() const;
};

// What one (placement, depth, value, value2) point resolves to: its RunConfig (seed not yet set) and the numeric
// values x, x2.
struct PointConfig {
  RunConfig rc;
  double x = 0;
  double x2 = 0;
};
// value2 is "" without a second swept parameter.
using MakePoint = std::function<PointConfig(const std::string& placement, Index depth, const std::string& value,
                                            const std::string& value2)>;

// Groups in the order placement-major, then depth, then value, then value2; repetitions innermost. Error when
// two configurations would share a file name (values that differ only in characters file_name replaces).
std::vector<Configuration> plan_configurations(const PlanAxes& axes, const MakePoint& make);

// "6,12,24" -> {"6","12","24"}; empty or repeated items are an Error naming `option`.
std::vector<std::string> split_list(const std::string& text, const std::string& option);

}  // namespace gradflow
