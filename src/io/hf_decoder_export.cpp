// hf_decoder_export.cpp — a decoder family's config.json for an exported model, checked by reading it back
// (hf_decoder_export.hpp).
#include "io/hf_decoder_export.hpp"

#include <sstream>

#include "gradflow/core/error.hpp"
#include "gradflow/io/checkpoint.hpp"
#include "io/hf_config.hpp"

namespace gradflow::io_detail {

namespace {

std::string text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string activation_text(Activation a) {
  return a == Activation::Relu ? "relu" : a == Activation::Gelu ? "gelu" : a == Activation::Silu ? "silu" : "gelu_new";
}

}  // namespace

nlohmann::ordered_json decoder_config_json(const HfLayout& l, const ModelConfig& m) {
  const std::string& type = l.config.model_type;
  const bool neox = type == "gpt_neox", gemma = type == "gemma2";
  nlohmann::ordered_json c;
  c["model_type"] = type;
  c["architectures"] = {l.architecture};
  c["hidden_size"] = m.d_model;
  c["intermediate_size"] = m.ff();
  c["num_hidden_layers"] = m.layers;
  c["num_attention_heads"] = m.heads;
  c["num_key_value_heads"] = m.kv();
  c["head_dim"] = m.hd();
  if (neox) {
    c["rotary_emb_base"] = m.rope_theta;
    c["rotary_pct"] = m.rotary_fraction;
    c["use_parallel_residual"] = m.placement == "parallel";
    c["layer_norm_eps"] = m.norm_eps;
    c["hidden_act"] = activation_text(m.activation);
    c["attention_bias"] = true;
  } else {
    c["rope_theta"] = m.rope_theta;
    if (m.rotary_fraction != 1.0) c["partial_rotary_factor"] = m.rotary_fraction;
    c["rope_scaling"] = nullptr;
    c["rms_norm_eps"] = m.norm_eps;
    c[gemma ? "hidden_activation" : "hidden_act"] =
        m.ffn == FeedForwardKind::GeGLU ? "gelu_pytorch_tanh" : m.ffn == FeedForwardKind::SwiGLU ? "silu" : "(a plain MLP)";
    if (type != "qwen2") c["attention_bias"] = m.bias;
    if (type == "llama") c["mlp_bias"] = m.bias;
    if (type == "qwen2" || type == "qwen3") c["use_sliding_window"] = false;
    if (type == "mistral" || gemma) c["sliding_window"] = nullptr;
  }
  if (gemma) {
    c["query_pre_attn_scalar"] = m.attn_scale > 0 ? m.attn_scale : static_cast<double>(m.hd());
    c["attn_logit_softcapping"] = m.attn_softcap > 0 ? nlohmann::ordered_json(m.attn_softcap) : nullptr;
    c["final_logit_softcapping"] = nullptr;
  }
  c["tie_word_embeddings"] = false;
  c["torch_dtype"] = "float64";
  c["gradflow_note"] = "block stack and final norm only (no embeddings or LM head): written by gradflow export "
                       "--format " + l.format;
  return c;
}

void check_decoder_fits(const HfLayout& l, const ModelConfig& cfg, const nlohmann::ordered_json& c, bool final_norm) {
  const std::string head = "--format " + l.format + " writes " + l.note + ", but the model ";
  const nlohmann::json plain = nlohmann::json::parse(c.dump());
  ModelConfig back = cfg;
  try {
    apply_decoder_arch(decoder_arch(l, &plain, "(written by export)"), back);
  } catch (const Error& e) {
    throw Error(head + "does not fit it: " + e.what());
  }
  std::string diff;
  const auto differ = [&](bool different, const std::string& option, const std::string& model,
                          const std::string& family) {
    if (different) diff += (diff.empty() ? "" : ", ") + option + " " + model + " (" + l.format + ": " + family + ")";
  };
  const auto word = [](bool b) { return std::string(b ? "on" : "off"); };
  differ(back.placement != cfg.placement, "--placement", cfg.placement, back.placement);
  differ(!cfg.causal, "--causal", "off", "on");
  differ(!cfg.rope, "--rope", "off", "on");
  differ(back.qk_norm != cfg.qk_norm, "--qk-norm", to_string(cfg.qk_norm), to_string(back.qk_norm));
  differ(back.attn_softcap != cfg.attn_softcap, "--attn-softcap", text(cfg.attn_softcap), text(back.attn_softcap));
  const auto scale = [](const ModelConfig& m) { return m.attn_scale > 0 ? m.attn_scale : static_cast<double>(m.hd()); };
  differ(scale(back) != scale(cfg), "--attn-scale", text(scale(cfg)), text(scale(back)));
  differ(back.ffn != cfg.ffn, "--ffn", to_string(cfg.ffn), to_string(back.ffn));
  differ(back.bias != cfg.bias, "--bias", word(cfg.bias), word(back.bias));
  differ(back.in_proj_bias() != cfg.in_proj_bias(), "--qkv-bias", word(cfg.in_proj_bias()), word(back.in_proj_bias()));
  differ(cfg.shared_norm, "--shared-norm", "on", "off");
  differ(back.norm != cfg.norm, "--norm", cfg.norm == NormKind::LayerNorm ? "layernorm" : cfg.norm == NormKind::RMSNorm ? "rmsnorm" : "dyt",
         back.norm == NormKind::LayerNorm ? "layernorm" : "rmsnorm");
  differ(back.norm_offset != cfg.norm_offset, "--norm-offset", word(cfg.norm_offset), word(back.norm_offset));
  differ(cfg.residual_scale != 1.0, "--residual-scale", text(cfg.residual_scale), "1");
  differ(!final_norm, "the final norm", "off", "on");
  if (!diff.empty())
    throw Error(head + "has " + diff + "; fix: build the model with the family's block (e.g. --arch " +
                (l.config.model_type == "gpt_neox" ? std::string("neox") : l.config.model_type == "mistral"
                                                                                ? std::string("llama")
                                                                                : l.config.model_type) +
                "), or export it with --format torch-encoder (gradflow's names)");
}

}  // namespace gradflow::io_detail
