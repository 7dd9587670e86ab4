// config_json.cpp — see config_json.hpp. Keys match the command-line flags (with underscores).
#include "gradflow/report/config_json.hpp"

#include "gradflow/model/placement.hpp"

namespace gradflow {

nlohmann::ordered_json model_config_json(const Model& model, const InitConfig& init, Index seq_len) {
  const ModelConfig& c = model.config();
  nlohmann::ordered_json j;
  j["gradflow_version"] = GRADFLOW_VERSION;
  j["placement"] = c.placement;
  j["layers"] = c.layers;
  j["d_model"] = c.d_model;
  j["heads"] = c.heads;
  j["d_ff"] = c.ff();
  j["seq_len"] = seq_len;
  j["activation"] = to_string(c.activation);
  j["causal"] = c.causal;
  j["norm"] = to_string(c.norm);
  j["norm_eps"] = c.norm_eps;
  j["final_norm"] = model.has_final_norm();
  j["residual_scale"] = c.residual_scale;
  find_placement(c.placement).config_fields(c, j);  // the scheme's own options, resolved
  j["init"] = init.scheme;
  j["init_scale"] = init.scale_text;
  j["init_scale_value"] = init.scale;
  j["seed"] = init.seed;
  return j;
}

}  // namespace gradflow
