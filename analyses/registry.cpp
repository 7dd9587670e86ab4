// registry.cpp — the one place where analyses are registered, in the order they run.
#include "gradflow/run/analysis.hpp"
#include "gradflow/core/cancel.hpp"

namespace gradflow {

std::unique_ptr<Analysis> make_activation_stats();
std::unique_ptr<Analysis> make_attention_entropy();
std::unique_ptr<Analysis> make_attention_gradients();
std::unique_ptr<Analysis> make_branch_ratios();
std::unique_ptr<Analysis> make_gradient_norms();
std::unique_ptr<Analysis> make_jacobian_norms();
std::unique_ptr<Analysis> make_matrix_free_norms();
std::unique_ptr<Analysis> make_output_sensitivity();
std::unique_ptr<Analysis> make_placement_constants();
std::unique_ptr<Analysis> make_streamed_norms();
std::unique_ptr<Analysis> make_token_geometry();

const std::vector<std::unique_ptr<Analysis>>& analyses() {
  static const std::vector<std::unique_ptr<Analysis>> all = [] {
    std::vector<std::unique_ptr<Analysis>> v;
    v.push_back(make_activation_stats());
    v.push_back(make_gradient_norms());
    v.push_back(make_jacobian_norms());
    v.push_back(make_matrix_free_norms());
    v.push_back(make_streamed_norms());
    v.push_back(make_placement_constants());
    v.push_back(make_token_geometry());
    v.push_back(make_attention_entropy());
    v.push_back(make_branch_ratios());
    v.push_back(make_attention_gradients());
    v.push_back(make_output_sensitivity());
    return v;
  }();
  return all;
}

void check_analyses(const Model& model, const AnalysisOptions& opts, const Backend& backend) {
  for (const auto& a : analyses()) a->check(model, opts, backend);
}

Json run_analyses(const AnalysisContext& ctx) {
  Json report = Json::object();
  Json layers = Json::array();
  for (Index l = 0; l < ctx.model.layers(); ++l) layers.push_back(Json{{"index", l}});
  report["layers"] = std::move(layers);
  report["summary"] = Json::object();
  for (const auto& a : analyses()) {
    check_cancel();  // a front end asked to stop (core/cancel.hpp)
    if (a->enabled(ctx)) a->run(ctx, report);
  }
  return report;
}

}  // namespace gradflow
