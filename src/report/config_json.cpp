// config_json.cpp — see config_json.hpp. Keys match the command-line flags (with underscores).
#include "gradflow/report/config_json.hpp"

#include "gradflow/model/placement.hpp"
#include "gradflow/report/fields.hpp"

namespace gradflow {

nlohmann::ordered_json model_config_json(const Model& model, const InitConfig& init, Index seq_len) {
  const ModelConfig& c = model.config();
  nlohmann::ordered_json j;
  j["gradflow_version"] = GRADFLOW_VERSION;
  j[fields::kPlacement] = c.placement;
  j[fields::kLayers] = c.layers;
  j[fields::kDModel] = c.d_model;
  j[fields::kHeads] = c.heads;
  if (c.kv() != c.heads) j["kv_heads"] = c.kv();
  if (c.head_dim > 0) j["head_dim"] = c.hd();
  if (c.rope) {
    j["rope"] = true;
    j["rope_theta"] = c.rope_theta;
    j["rotary_fraction"] = c.rotary_fraction;
  }
  if (c.qk_norm != QkNorm::None) j["qk_norm"] = to_string(c.qk_norm);
  if (c.attn_softcap > 0) j["attn_softcap"] = c.attn_softcap;
  if (c.attn_scale > 0) j["attn_scale"] = c.attn_scale;
  j[fields::kDFf] = c.ff();
  j[fields::kSeqLen] = seq_len;
  j[fields::kActivation] = to_string(c.ffn_activation());
  j["ffn"] = to_string(c.ffn);
  j["bias"] = c.bias;
  if (c.qkv_bias) j["qkv_bias"] = true;
  if (c.placement == "parallel") j["shared_norm"] = c.shared_norm;
  j[fields::kCausal] = c.causal;
  j[fields::kNorm] = to_string(c.norm);
  j["norm_eps"] = c.norm_eps;
  if (c.norm_offset) j["norm_offset"] = true;
  if (c.embed_scale_sqrt_d || c.embed_scale != 1.0) {
    j["embed_scale"] = c.embedding_scale();
    if (c.embed_scale_sqrt_d) j["embed_scale_text"] = "sqrt-d";
  }
  j["final_norm"] = model.has_final_norm();
  j[fields::kResidualScale] = c.residual_scale;
  if (c.param.scales_width()) {  // absent under sp (reports unchanged)
    const ParametrizationFactors f = c.factors();
    nlohmann::ordered_json p;
    p["name"] = to_string(c.param.kind);
    p["base_width"] = c.param.base_width;
    p["width_multiplier"] = f.width_mult;
    if (c.param.scales_depth()) {
      p["base_depth"] = c.param.base_depth;
      p["depth_multiplier"] = f.depth_mult;
      p["alpha"] = c.param.alpha();
    }
    p["branch_multiplier"] = f.branch;  // composes with residual_scale: lambda = residual_scale * branch_multiplier
    p["logit_scale"] = c.logit_scale();
    p["logit_scale_from"] = c.attn_scale > 0 ? "--attn-scale (wins over the parametrization's)" : "parametrization";
    p["readout_multiplier"] = f.readout;
    j["parametrization"] = p;
  }
  find_placement(c.placement).config_fields(c, j);  // the scheme's own options, resolved
  j[fields::kInit] = init.scheme;
  j[fields::kInitScale] = init.scale_text;
  j["init_scale_value"] = init.scale;
  j[fields::kSeed] = init.seed;
  return j;
}

}  // namespace gradflow
