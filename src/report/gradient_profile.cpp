// gradient_profile.cpp — see gradient_profile.hpp.
#include "gradflow/report/gradient_profile.hpp"

#include <cmath>

#include "gradflow/model/model.hpp"
#include "gradflow/report/fields.hpp"

namespace gradflow {

nlohmann::ordered_json write_gradient_profile(const std::vector<double>& grad_norms,
                                              const std::vector<ParamGradNorm>& params, nlohmann::ordered_json& layers) {
  for (size_t l = 0; l < grad_norms.size(); ++l) {
    nlohmann::ordered_json& layer = layers[l];
    layer[fields::kGradNorm] = finite_or_null(grad_norms[l]);
    const std::string prefix = Model::layer_prefix(static_cast<Index>(l));
    nlohmann::ordered_json pg = nlohmann::ordered_json::object();
    for (const auto& p : params)
      if (p.block == static_cast<Index>(l)) pg[p.name->substr(prefix.size())] = finite_or_null(p.norm);
    layer[fields::kParamGradNorms] = std::move(pg);
  }
  nlohmann::ordered_json head = nlohmann::ordered_json::object();
  for (const auto& p : params)
    if (p.block < 0) head[*p.name] = finite_or_null(p.norm);
  return head;
}

double bottom_to_top_ratio(const std::vector<double>& grad_norms) {
  if (grad_norms.empty() || !std::isfinite(grad_norms.front()) || !std::isfinite(grad_norms.back())) return NAN;
  return grad_norms.front() / grad_norms.back();
}

}  // namespace gradflow
