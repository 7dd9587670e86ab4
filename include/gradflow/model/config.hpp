// config.hpp — every option that shapes a model and its initialization (CLI flags in comments).
#pragma once
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "gradflow/model/parametrization.hpp"
#include "gradflow/ops/activation.hpp"
#include "gradflow/ops/norm.hpp"
#include "gradflow/core/types.hpp"

namespace gradflow {

// The values of the options only some placements read (placement.hpp: SchemeOption), keyed by the option's name
// ("deepnorm-alpha"); an option that was not given is absent and its scheme uses its default.
struct SchemeValues {
  std::map<std::string, double> numbers;      // Number options, e.g. {"deepnorm-alpha", 2.0}
  std::map<std::string, Index> counts;        // Count options, e.g. {"mix-post-layers", 6}
  std::map<std::string, std::string> words;   // Word options, e.g. {"mix-order", "pre-first"}
  double number(const std::string& name, double fallback) const;
  Index count(const std::string& name, Index fallback) const;
  std::string word(const std::string& name, const std::string& fallback) const;
  bool given(const std::string& name) const;
};

// The feed-forward branch: mlp = linear2(act(linear1(x))); the gated forms (Shazeer 2020) =
// linear2(act(linear1(x)) ⊙ linear3(x)) with act = silu (SwiGLU: Llama, Qwen, OLMo) or gelu-tanh (GeGLU: Gemma).
enum class FeedForwardKind { Mlp, SwiGLU, GeGLU };
FeedForwardKind parse_ffn(const std::string& name);  // "mlp" | "swiglu" | "geglu", else Error
inline std::string to_string(FeedForwardKind f) {      // inline: the io readers' fuzz build links no model code
  return f == FeedForwardKind::SwiGLU ? "swiglu" : f == FeedForwardKind::GeGLU ? "geglu" : "mlp";
}

// Query/key norms (--qk-norm): none; per head, a norm of width head_dim shared by the heads (Qwen3); over the whole
// projection before the head split, width h·head_dim for q and K·head_dim for k (OLMo-2).
enum class QkNorm { None, Head, Proj };
QkNorm parse_qk_norm(const std::string& name);  // "none" | "head" | "proj", else Error
inline std::string to_string(QkNorm q) { return q == QkNorm::Head ? "head" : q == QkNorm::Proj ? "proj" : "none"; }

struct ModelConfig {
  Index layers = 6;                          // --layers L (e.g. 24)
  Index d_model = 64;                        // --d-model d
  Index heads = 4;                           // --heads h (must divide d unless --head-dim is given)
  Index kv_heads = 0;                        // --kv-heads K (grouped-query attention; 0 => h); K divides h
  Index head_dim = 0;                        // --head-dim e (0 => d/h): q (h·e, d), k, v (K·e, d), out_proj (d, h·e)
  bool rope = false;                         // --rope: rotary positions on q and k (rotate-half pairing)
  double rope_theta = 10000;                 // --rope-theta
  double rotary_fraction = 1.0;              // --rotary-fraction: the rotated part of each head (Pythia 0.25)
  QkNorm qk_norm = QkNorm::None;             // --qk-norm none|head|proj
  double attn_softcap = 0;                   // --attn-softcap C: s <- C·tanh(s/C) before the mask (0: none)
  double attn_scale = 0;                     // --attn-scale S: logits times S^(-1/2) (0 => head_dim)
  Index d_ff = 0;                            // --d-ff (0 => 4·d)
  Activation activation = Activation::Relu;  // --activation relu|gelu|gelu-tanh|silu (PyTorch's default is relu; mlp only)
  FeedForwardKind ffn = FeedForwardKind::Mlp;  // --ffn mlp|swiglu|geglu (d_ff: the gate's and up's width)
  bool bias = true;                          // --bias on|off: the bias of every linear layer
  bool qkv_bias = false;                     // --qkv-bias: q, k, v keep theirs under --bias off (Qwen2)
  bool shared_norm = false;                  // --shared-norm: placement parallel's one norm for both branches
  bool causal = false;                       // --causal
  std::string placement = "post";            // --placement (see `gradflow placements`)
  NormKind norm = NormKind::LayerNorm;       // --norm layernorm|rmsnorm|dyt
  double norm_eps = 1e-5;                    // PyTorch's layer_norm_eps
  bool norm_offset = false;                  // --norm-offset: every norm's scale is 1 + w, w stored (init 0; Gemma)
  double embed_scale = 1.0;                  // --embed-scale S: x_0 = S·embedding where x_0 comes from embeddings
  bool embed_scale_sqrt_d = false;           // --embed-scale sqrt-d: S = √d in float64 (Gemma)
  std::optional<bool> final_norm;            // unset => the placement's default; --no-final-norm => false
  double residual_scale = 1.0;               // --residual-scale λ: x + λ·G(...)
  Parametrization param;                     // --parametrization, --base-width, --base-depth (parametrization.hpp)
  SchemeValues scheme;                       // the placements' own options (--deepnorm-alpha, --mix-order, ...)

  // S of --embed-scale: √d (float64) for sqrt-d, else the number given (1: none)
  double embedding_scale() const { return embed_scale_sqrt_d ? std::sqrt(static_cast<double>(d_model)) : embed_scale; }
  Index ff() const { return d_ff > 0 ? d_ff : 4 * d_model; }
  bool gated() const { return ffn != FeedForwardKind::Mlp; }
  Index kv() const { return kv_heads > 0 ? kv_heads : heads; }
  Index hd() const { return head_dim > 0 ? head_dim : d_model / heads; }
  Index q_width() const { return heads * hd(); }                  // rows of q in in_proj, columns of out_proj
  Index qkv_width() const { return (heads + 2 * kv()) * hd(); }   // rows of in_proj
  // 1/√(attn_scale or head_dim); without --attn-scale, a width parametrization's √e0/e (mup_logit_scale)
  double logit_scale() const;
  // The parametrization's factors at this width and depth (all 1 under sp); branch_multiplier() = m_L^(-α).
  ParametrizationFactors factors() const { return parametrization_factors(param, d_model, layers); }
  double branch_multiplier() const { return factors().branch; }
  // The feed-forward branch's activation: --activation for mlp, silu for swiglu, gelu-tanh for geglu.
  Activation ffn_activation() const;
  bool in_proj_bias() const { return bias || qkv_bias; }  // attention's q, k, v biases
  void validate() const;  // throws Error naming the option and the fix (the scheme options' checks included)
};

struct InitConfig {
  std::string scheme = "torch";       // --init torch|xavier|xavier-normal|gpt2|t-fixup
  std::string scale_text = "1";       // --init-scale C | inv-sqrt-2L (as given, for the report)
  double scale = 1.0;                 // resolved multiplier of out_proj.weight and linear2.weight
  uint64_t seed = 0;                  // --seed
};

// Parses --init-scale: a positive number or "inv-sqrt-2L" (= 1/sqrt(2L)).
double parse_init_scale(const std::string& text, Index layers);

}  // namespace gradflow
