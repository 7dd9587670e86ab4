// gradient_profile.hpp — the per-layer gradient quantities of a report, assembled in one place for analyze
// (analyses/gradient_norms.cpp) and train (train/train.cpp): layers[l].grad_norm = ‖dL/dx_l‖,
// layers[l].param_grad_norms (names relative to the block, e.g. "linear2.weight"), the norms of the parameters
// outside the blocks (head_param_grad_norms, full names), and the bottom-to-top ratio ‖dL/dx_0‖ / ‖dL/dx_{L−1}‖.
// Non-finite values are written as null (JSON has no NaN).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gradflow/core/types.hpp"
#include "gradflow/report/finite_json.hpp"

namespace gradflow {

// One parameter's gradient norm and the block it belongs to (-1: outside the blocks).
struct ParamGradNorm {
  const std::string* name;  // the parameter's full name, e.g. "layers.3.linear2.weight"
  Index block;
  double norm;
};

// Writes grad_norm and param_grad_norms into layers[l] for l = 0..grad_norms.size()−1 (creating the objects when
// absent) and returns the head's object {name: norm} of the parameters with block −1, in the given order.
nlohmann::ordered_json write_gradient_profile(const std::vector<double>& grad_norms,
                                              const std::vector<ParamGradNorm>& params, nlohmann::ordered_json& layers);

// ‖dL/dx_0‖ / ‖dL/dx_{L−1}‖ of grad_norms (l = 0..L−1); NaN when either is not finite.
double bottom_to_top_ratio(const std::vector<double>& grad_norms);

}  // namespace gradflow
