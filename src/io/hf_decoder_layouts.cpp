// hf_decoder_layouts.cpp — the name maps of the decoder families (hf_layouts.hpp): Llama, Mistral, Qwen2, Qwen3,
// OLMo-2, Gemma-2 and GPT-NeoX (Pythia). Which of a family's optional tensors the model has (biases, QK-norm) and
// every other block option is config.json's (hf_decoder_config.cpp).
// Sources (read, not copied): transformers' models/llama/modeling_llama.py (LlamaAttention q_proj, k_proj, v_proj
// with num_key_value_heads·head_dim outputs, o_proj; LlamaMLP down_proj(act(gate_proj(x)) * up_proj(x));
// LlamaDecoderLayer input_layernorm before attention, post_attention_layernorm before the MLP; LlamaModel.norm),
// models/mistral (the same layer), models/qwen2 (q, k, v with biases), models/qwen3 (q_norm, k_norm of width
// head_dim), models/olmo2 (post_attention_layernorm after attention, post_feedforward_layernorm after the MLP, q_norm
// and k_norm over the projections), models/gemma2 (input_layernorm, post_attention_layernorm,
// pre_feedforward_layernorm, post_feedforward_layernorm), models/gpt_neox (GPTNeoXAttention.query_key_value viewed
// as (n, h, 3·e) and split per head; dense; GPTNeoXMLP dense_h_to_4h, dense_4h_to_h; input_layernorm,
// post_attention_layernorm; final_layer_norm; embed_in, embed_out).
#include "io/hf_layouts.hpp"

namespace gradflow::io_detail {

namespace {

// q, k, v as three Linears (biases: Qwen2 always, Llama with attention_bias), o_proj, and the gated MLP.
std::vector<TensorRule> llama_block() {
  return {
      {"self_attn.in_proj_weight", {"self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight"}},
      {"self_attn.in_proj_bias", {"self_attn.q_proj.bias", "self_attn.k_proj.bias", "self_attn.v_proj.bias"}, false,
       true},
      {"self_attn.out_proj.weight", {"self_attn.o_proj.weight"}},
      {"self_attn.out_proj.bias", {"self_attn.o_proj.bias"}, false, true},
      {"linear1.weight", {"mlp.gate_proj.weight"}},
      {"linear1.bias", {"mlp.gate_proj.bias"}, false, true},
      {"linear2.weight", {"mlp.down_proj.weight"}},
      {"linear2.bias", {"mlp.down_proj.bias"}, false, true},
      {"linear3.weight", {"mlp.up_proj.weight"}},
      {"linear3.bias", {"mlp.up_proj.bias"}, false, true},
      {"self_attn.q_norm.weight", {"self_attn.q_norm.weight"}, false, true},
      {"self_attn.k_norm.weight", {"self_attn.k_norm.weight"}, false, true},
  };
}

// gradflow's norm `g` (norm1 ...) from the family's `hf` (input_layernorm ...), RMSNorm: a weight only.
TensorRule rms(const std::string& g, const std::string& hf) { return {g + ".weight", {hf + ".weight"}}; }

HfLayout llama_like(const std::string& format, const std::string& model_type, const std::string& placement,
                    const std::string& architecture, const std::string& note) {
  HfLayout l;
  l.format = format;
  l.prefixes = {"", "model."};
  l.layer_stem = "layers.";
  l.block = llama_block();
  l.final_norm = {rms("norm", "norm")};
  l.ignored_in_layer = {"self_attn.rotary_emb.inv_freq"};  // a buffer older files carry
  l.placement = placement;
  l.causal = true;
  l.default_activation = "silu";
  l.default_norm_eps = 1e-6;
  l.config = {"hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size", "hidden_act",
              "rms_norm_eps", model_type};
  l.embeddings.word = "embed_tokens.weight";
  l.embeddings.head = "lm_head.weight";
  l.note = note;
  l.decoder = true;
  l.architecture = architecture;
  return l;
}

HfLayout pre_rms(const std::string& format, const std::string& model_type, const std::string& architecture,
                 const std::string& note) {
  HfLayout l = llama_like(format, model_type, "pre", architecture, note);
  for (const TensorRule& r : {rms("norm1", "input_layernorm"), rms("norm2", "post_attention_layernorm")})
    l.block.push_back(r);
  return l;
}

HfLayout olmo2() {
  HfLayout l = llama_like("hf-olmo2", "olmo2", "reorder", "Olmo2ForCausalLM",
                          "OLMo-2: norms after each branch (reorder), QK-norm over the projections, layers "
                          "model.layers.{i}");
  for (const TensorRule& r : {rms("norm1", "post_attention_layernorm"), rms("norm2", "post_feedforward_layernorm")})
    l.block.push_back(r);
  l.default_norm_eps = 1e-5;
  return l;
}

HfLayout gemma2() {
  HfLayout l = llama_like("hf-gemma2", "gemma2", "sandwich", "Gemma2ForCausalLM",
                          "Gemma-2: norms before and after each branch (sandwich), RMSNorm scale 1 + w, GeGLU, "
                          "layers model.layers.{i}");
  for (const TensorRule& r : {rms("norm1", "input_layernorm"), rms("norm3", "post_attention_layernorm"),
                              rms("norm2", "pre_feedforward_layernorm"), rms("norm4", "post_feedforward_layernorm")})
    l.block.push_back(r);
  l.config.activation = "hidden_activation";  // Gemma2Config's name (hidden_act is read when it is absent)
  l.default_activation = "gelu_pytorch_tanh";
  return l;
}

HfLayout neox() {
  HfLayout l;
  l.format = "hf-neox";
  l.prefixes = {"", "gpt_neox."};
  l.layer_stem = "layers.";
  const auto ln = [](const std::string& g, const std::string& hf) {
    return std::vector<TensorRule>{{g + ".weight", {hf + ".weight"}}, {g + ".bias", {hf + ".bias"}}};
  };
  l.block = {
      {"self_attn.in_proj_weight", {"attention.query_key_value.weight"}, false, false, true},
      {"self_attn.in_proj_bias", {"attention.query_key_value.bias"}, false, false, true},
      {"self_attn.out_proj.weight", {"attention.dense.weight"}},
      {"self_attn.out_proj.bias", {"attention.dense.bias"}},
      {"linear1.weight", {"mlp.dense_h_to_4h.weight"}},
      {"linear1.bias", {"mlp.dense_h_to_4h.bias"}},
      {"linear2.weight", {"mlp.dense_4h_to_h.weight"}},
      {"linear2.bias", {"mlp.dense_4h_to_h.bias"}},
  };
  for (const auto& rules : {ln("norm1", "input_layernorm"), ln("norm2", "post_attention_layernorm")})
    l.block.insert(l.block.end(), rules.begin(), rules.end());
  l.final_norm = ln("norm", "final_layer_norm");
  // the buffers of Pythia's files: the uint8 causal mask, its 0-d fill value, the rotary frequencies
  l.ignored_in_layer = {"attention.bias", "attention.masked_bias", "attention.rotary_emb.inv_freq"};
  l.placement = "parallel";  // use_parallel_residual false: "pre"
  l.causal = true;
  l.default_activation = "gelu";
  l.default_norm_eps = 1e-5;
  l.config = {"hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size", "hidden_act",
              "layer_norm_eps", "gpt_neox"};
  l.embeddings.word = "embed_in.weight";
  l.embeddings.head = "embed_out.weight";
  l.note = "GPT-NeoX/Pythia: parallel residual, LayerNorm, partial RoPE, layers gpt_neox.layers.{i}";
  l.decoder = true;
  l.architecture = "GPTNeoXForCausalLM";
  return l;
}

}  // namespace

std::vector<HfLayout> hf_decoder_layouts() {
  return {
      pre_rms("hf-llama", "llama", "LlamaForCausalLM",
              "Llama: Pre-RMSNorm, SwiGLU, RoPE, grouped-query heads, layers model.layers.{i}"),
      pre_rms("hf-mistral", "mistral", "MistralForCausalLM",
              "Mistral: Llama's block with a sliding window, layers model.layers.{i}"),
      pre_rms("hf-qwen2", "qwen2", "Qwen2ForCausalLM", "Qwen2: Llama's block with q, k, v biases, layers model.layers.{i}"),
      pre_rms("hf-qwen3", "qwen3", "Qwen3ForCausalLM", "Qwen3: Llama's block with QK-norm per head, layers model.layers.{i}"),
      olmo2(),
      gemma2(),
      neox(),
  };
}

}  // namespace gradflow::io_detail
