// hf_decoder_config.cpp — what a decoder family's config.json fixes (hf_config.hpp: decoder_arch). Every key is
// read through ConfigReader (its type checked, the key named in every error); where config.json is silent, the
// family's configuration class decides, with the defaults of transformers' LlamaConfig, MistralConfig, Qwen2Config,
// Qwen3Config, Olmo2Config, Gemma2Config and GPTNeoXConfig (read, not copied; docs/formats.md lists them).
#include <cmath>

#include "io/hf_config.hpp"

namespace gradflow::io_detail {

namespace {

using json = nlohmann::json;

struct Family {
  bool neox = false, gemma = false, olmo = false, qwen2 = false, qwen3 = false, mistral = false;
};

Family family_of(const HfLayout& l) {
  const std::string& t = l.config.model_type;
  Family f;
  f.neox = t == "gpt_neox";
  f.gemma = t == "gemma2";
  f.olmo = t == "olmo2";
  f.qwen2 = t == "qwen2";
  f.qwen3 = t == "qwen3";
  f.mistral = t == "mistral";
  return f;
}

// Refuses a setting gradflow's block does not compute.
void refuse(const ConfigReader& r, const std::string& what, const std::string& fix) {
  fail(r.where(), what + ", which gradflow's block does not compute", fix);
}

// One of two spellings of a number (GPT-NeoX's rotary_emb_base and rope_theta, rotary_pct and
// partial_rotary_factor): both given and different is an error.
std::optional<double> either(const ConfigReader& r, const std::string& a, const std::string& b, bool fraction) {
  const auto get = [&](const std::string& k) { return fraction ? r.fraction(k) : r.positive_number(k); };
  const std::optional<double> va = get(a), vb = get(b);
  if (va && vb && *va != *vb)
    fail(r.where(), "\"" + a + "\" and \"" + b + "\" both say the same setting, with different values", 
         "keep one of them (the config.json saved with the model)");
  return va ? va : vb;
}

// A RoPE scaling object (rope_scaling, or Transformers 5's rope_parameters) must be of type "default" (plain RoPE):
// the other types rescale the frequencies for long contexts. "rope_type" and "type" both given and different is an
// error: Transformers 4 and 5 read different ones of the two.
void check_rope_type(const ConfigReader& r, const json& s, const std::string& key) {
  std::optional<std::string> rope_type, type;
  if (s.contains("rope_type") && s["rope_type"].is_string()) rope_type = s["rope_type"].get<std::string>();
  if (s.contains("type") && s["type"].is_string()) type = s["type"].get<std::string>();
  if (rope_type && type && *rope_type != *type)
    fail(r.where(), "\"" + key + "\" gives \"rope_type\" '" + printable(*rope_type, 40) + "' and \"type\" '" +
                        printable(*type, 40) + "', which Transformers 4 and 5 read differently",
         "keep one of the two keys, the one the model was trained with");
  const std::string t = rope_type ? *rope_type : type ? *type : "(no type)";
  if (t != "default")
    refuse(r, "\"" + key + "\" has type '" + printable(t, 40) + "' (frequencies rescaled for long contexts)",
           "analyze a checkpoint with plain RoPE (rope type \"default\"), or set \"" + key + "\" to plain RoPE to "
           "study the block without the rescaling (the numbers then describe that other model)");
}

// A number that config.json may give at the top level and inside Transformers 5's rope_parameters: both given and
// different is an error.
std::optional<double> with_rope_parameters(const ConfigReader& r, const json* p, const std::string& key,
                                           std::optional<double> top, bool fraction) {
  if (!p || !p->contains(key) || (*p)[key].is_null()) return top;
  const json& v = (*p)[key];
  const double x = v.is_number() ? v.get<double>() : std::nan("");
  if (!(std::isfinite(x) && x > 0 && (!fraction || x <= 1)))
    fail(r.where(), "\"rope_parameters\"." + key + " is " + printable(v.dump(), 40) + ", not " +
                        (fraction ? "a number in (0, 1]" : "a positive number"),
         "restore the config.json saved with the model");
  if (top && *top != x)
    fail(r.where(), "\"" + key + "\" and \"rope_parameters\"." + key + " both say the same setting, with different values",
         "keep one of them (the config.json saved with the model)");
  return x;
}

// RoPE: theta, the rotated fraction of each head, and the scaling (only its "default" type is computed), from the
// top-level keys of Transformers 4 and from rope_parameters (Transformers 5) by the same rules.
void read_rope(const ConfigReader& r, const Family& f, CheckpointArch& a) {
  const json* params = r.object("rope_parameters");
  if (params)
    for (const auto& [k, v] : params->items())
      if (v.is_object())
        refuse(r, "\"rope_parameters\" gives a RoPE per layer type ('" + printable(k, 40) + "')",
               "analyze a checkpoint with one RoPE for every layer");
  std::optional<double> theta = either(r, "rope_theta", f.neox ? "rotary_emb_base" : "rope_theta", false);
  std::optional<double> fraction =
      either(r, "partial_rotary_factor", f.neox ? "rotary_pct" : "partial_rotary_factor", true);
  a.rope_theta = with_rope_parameters(r, params, "rope_theta", theta, false).value_or(10000.0);
  a.rotary_fraction =
      with_rope_parameters(r, params, "partial_rotary_factor", fraction, true).value_or(f.neox ? 0.25 : 1.0);
  if (const json* s = r.object("rope_scaling")) check_rope_type(r, *s, "rope_scaling");
  if (params) check_rope_type(r, *params, "rope_parameters");
}

// The feed-forward branch: SwiGLU (silu), Gemma's GeGLU (gelu_pytorch_tanh), GPT-NeoX's plain MLP.
void read_activation(const ConfigReader& r, const HfLayout& l, const Family& f, CheckpointArch& a) {
  std::string key = l.config.activation;
  if (f.gemma && !r.present(key)) key = "hidden_act";  // older Gemma-2 configs
  a.activation_name = r.string(key).value_or(l.default_activation);
  const std::string& n = a.activation_name;
  const auto bad = [&](const std::string& has) {
    fail(r.where(), "\"" + key + "\" is '" + printable(n, 40) + "', which gradflow's " + l.format + " block does not " +
                        "have (it has " + has + ")",
         "analyze a checkpoint with that activation");
  };
  if (f.neox) {
    a.ffn = FeedForwardKind::Mlp;
    if (n == "gelu") a.activation = Activation::Gelu;
    else if (n == "gelu_new" || n == "gelu_pytorch_tanh") a.activation = Activation::GeluTanh;
    else if (n == "relu") a.activation = Activation::Relu;
    else bad("gelu, gelu_new, gelu_pytorch_tanh, relu");
  } else if (f.gemma) {
    if (n != "gelu_pytorch_tanh") bad("gelu_pytorch_tanh: GeGLU");
    a.ffn = FeedForwardKind::GeGLU;
    a.activation = Activation::GeluTanh;
  } else {
    if (n != "silu") bad("silu: SwiGLU");
    a.ffn = FeedForwardKind::SwiGLU;
    a.activation = Activation::Silu;
  }
}

// Biases: every linear (GPT-NeoX; Llama with attention_bias and mlp_bias), q, k, v alone (Qwen2), or none.
void read_biases(const ConfigReader& r, const Family& f, CheckpointArch& a) {
  const bool attention = r.boolean("attention_bias").value_or(f.neox);
  const bool mlp = r.boolean("mlp_bias").value_or(false);
  if (f.neox) {
    if (!attention)
      refuse(r, "\"attention_bias\" is false (no attention biases beside the MLP's)",
             "analyze a checkpoint with attention biases (Pythia's are)");
    a.bias = true;
    return;
  }
  if (f.qwen2) {  // Qwen2's q, k, v always have biases (no key); o_proj and the MLP none
    a.bias = false;
    a.qkv_bias = true;
    return;
  }
  if (attention != mlp)
    refuse(r, std::string(attention ? "\"attention_bias\" is true and \"mlp_bias\" is not"
                                    : "\"mlp_bias\" is true and \"attention_bias\" is not") +
                  " (biases on some linear layers only)",
           "analyze a checkpoint with every bias or none");
  a.bias = attention;
}

// The layers with a sliding window, as text ("" when none slides), and the window: "sliding_window" absent is the
// configuration class's default 4096 (Mistral, Qwen2, Qwen3, Gemma-2), null is no window.
void read_sliding(const ConfigReader& r, const Family& f, CheckpointArch& a) {
  const bool absent = !r.json()->contains("sliding_window");
  const Index window = absent ? 4096 : r.positive_int("sliding_window").value_or(0);
  if (window == 0) return;
  if (const json* types = r.list("layer_types")) {  // newer configs name each layer's attention
    std::string slide;
    for (size_t i = 0; i < types->size(); ++i) {
      const json& t = (*types)[i];
      if (!t.is_string()) r.wrong("layer_types", "a list of strings");
      if (t.get<std::string>() == "sliding_attention") slide += (slide.empty() ? "" : ", ") + std::to_string(i);
    }
    if (!slide.empty()) {
      a.sliding_window = window;
      a.sliding_layers = "layers " + slide + " (\"layer_types\")";
    }
    return;
  }
  if (f.mistral) {
    a.sliding_window = window;
    a.sliding_layers = "every layer";
  } else if (f.gemma) {
    a.sliding_window = window;
    a.sliding_layers = "layers 0, 2, 4, ... (Gemma-2's alternate layers)";
  } else if ((f.qwen2 || f.qwen3) && r.boolean("use_sliding_window").value_or(false)) {
    const Index from = r.non_negative_int("max_window_layers").value_or(28);
    if (a.layers && from >= *a.layers) return;  // no layer reaches it
    a.sliding_window = window;
    a.sliding_layers = "layers from \"max_window_layers\" = " + std::to_string(from) + " on";
  }
}

}  // namespace

CheckpointArch decoder_arch(const HfLayout& l, const json* c, const std::string& cpath) {
  if (!c)
    fail("--weights-format " + l.format, "needs the checkpoint's config.json, which fixes the block (heads, "
                                         "grouped-query heads, RoPE, norms), and none was found",
         "name the checkpoint's folder, with the config.json saved with it");
  const ConfigReader r(c, cpath);
  const Family f = family_of(l);
  CheckpointArch a;
  a.decoder = true;
  a.causal = true;
  a.source = r.where();
  a.placement = f.neox && !r.boolean("use_parallel_residual").value_or(true) ? "pre" : l.placement;
  a.d_model = r.positive_int(l.config.d_model);
  a.heads = r.positive_int(l.config.heads);
  if (!a.heads)
    fail(r.where(), "has no \"" + l.config.heads + "\" (the number of attention heads)",
         "restore the config.json saved with the model");
  a.layers = r.positive_int(l.config.layers);
  a.d_ff = r.positive_int(l.config.d_ff);
  a.kv_heads = r.positive_int("num_key_value_heads").value_or(0);
  if (a.kv_heads && *a.heads % a.kv_heads != 0)
    fail(r.where(), "\"num_key_value_heads\" = " + std::to_string(a.kv_heads) + " does not divide \"" +
                        l.config.heads + "\" = " + std::to_string(*a.heads),
         "restore the config.json saved with the model");
  a.head_dim = r.positive_int("head_dim").value_or(f.qwen3 ? 128 : f.gemma ? 256 : 0);
  if (!a.head_dim && a.d_model && *a.d_model % *a.heads != 0)
    fail(r.where(), "\"" + l.config.heads + "\" = " + std::to_string(*a.heads) + " does not divide \"" +
                        l.config.d_model + "\" = " + std::to_string(*a.d_model) + ", and there is no \"head_dim\"",
         "restore the config.json saved with the model");
  read_rope(r, f, a);
  const Index e = a.head_dim ? a.head_dim : a.d_model ? *a.d_model / *a.heads : 0;
  const Index rotary = static_cast<Index>(a.rotary_fraction * static_cast<double>(e));  // int(e · fraction), as HF
  if (e && (rotary < 2 || rotary % 2 != 0))
    fail(r.where(), "the rotary fraction " + printable(json(a.rotary_fraction).dump(), 20) + " of head width " +
                        std::to_string(e) + " rotates " + std::to_string(rotary) + " features, not an even number >= 2",
         "restore the config.json saved with the model");
  read_activation(r, l, f, a);
  read_biases(r, f, a);
  a.norm = f.neox ? NormKind::LayerNorm : NormKind::RMSNorm;
  a.norm_eps = r.positive_number(l.config.norm_eps).value_or(l.default_norm_eps);
  a.qk_norm = f.qwen3 ? QkNorm::Head : f.olmo ? QkNorm::Proj : QkNorm::None;
  if (f.gemma) {
    a.norm_offset = true;
    a.embed_scale_sqrt_d = true;
    // absent: Gemma2Config's defaults 50 and 30; null: no soft-cap
    const auto cap = [&](const std::string& k, double fallback) {
      return c->contains(k) ? r.positive_number(k).value_or(0.0) : fallback;
    };
    a.attn_softcap = cap("attn_logit_softcapping", 50.0);
    a.final_softcap = cap("final_logit_softcapping", 30.0);
    a.attn_scale = r.positive_number("query_pre_attn_scalar").value_or(256.0);
  }
  a.tied_head = r.boolean("tie_word_embeddings").value_or(f.gemma);
  if (r.present("clip_qkv")) refuse(r, "\"clip_qkv\" is set (q, k, v clamped)", "analyze a checkpoint without it");
  read_sliding(r, f, a);
  return a;
}

}  // namespace gradflow::io_detail
