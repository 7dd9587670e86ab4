// config_json.cpp — see config_json.hpp. Keys match the command-line flags (with underscores).
#include "gradflow/report/config_json.hpp"

#include "gradflow/model/placement.hpp"

namespace gradflow {

nlohmann::ordered_json config_to_json(const Model& model, const InitConfig& init, const AnalysisOptions& opts) {
  const ModelConfig& c = model.config();
  nlohmann::ordered_json j;
  j["gradflow_version"] = GRADFLOW_VERSION;
  j["placement"] = c.placement;
  j["layers"] = c.layers;
  j["d_model"] = c.d_model;
  j["heads"] = c.heads;
  j["d_ff"] = c.ff();
  j["seq_len"] = opts.seq_len;
  j["activation"] = to_string(c.activation);
  j["causal"] = c.causal;
  j["norm"] = to_string(c.norm);
  j["norm_eps"] = c.norm_eps;
  j["final_norm"] = model.has_final_norm();
  j["residual_scale"] = c.residual_scale;
  if (c.placement == "deepnorm") {
    j["deepnorm_alpha"] = deepnorm_alpha(c);
    j["deepnorm_beta"] = deepnorm_beta(c);
  }
  if (c.placement == "rezero") j["rezero_alpha"] = c.rezero_alpha;
  if (c.placement == "mix") {
    j["mix_post_layers"] = mix_post_layers(c);
    j["mix_order"] = c.mix_order;
  }
  j["init"] = init.scheme;
  j["init_scale"] = init.scale_text;
  j["init_scale_value"] = init.scale;
  j["seed"] = init.seed;
  j["loss"] = opts.loss;
  j["mode"] = opts.matrix_free ? "matrix-free" : opts.jacobians ? "explicit" : "gradients-only";
  j["parameters"] = model.params().numel();
  return j;
}

}  // namespace gradflow
