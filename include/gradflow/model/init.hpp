// init.hpp — parameter initialization schemes (each parameter from its own seeded stream, rng.hpp).
//   torch          PyTorch's defaults: in_proj_weight xavier_uniform, in_proj_bias 0, out_proj.weight and
//                  linear1/2 weights U(±1/√fan_in) (kaiming_uniform, a=√5), linear biases U(±1/√fan_in),
//                  out_proj.bias 0, norm gains 1 and biases 0. (Drawn independently per layer; note that
//                  nn.TransformerEncoder deep-copies one layer, so its layers start identical.)
//   xavier         nn.Transformer._reset_parameters: every weight matrix xavier_uniform, biases as torch
//   xavier-normal  Xiong et al. 2020's setting: weight matrices N(0, 2/(fan_in+fan_out)), biases 0
//   gpt2           weights N(0, 0.02), biases 0, out_proj/linear2 weights × 1/√(2L)
//   hf-normal      the decoder families' Hugging Face init (Llama, Mistral, Qwen2/3, OLMo-2, Gemma-2, GPT-NeoX
//                  `_init_weights`): every weight matrix N(0, 0.02) (their configs' initializer_range, at every
//                  width), biases 0, norm weights 1 (0 with --norm-offset: Gemma's stored w of 1 + w); the --arch
//                  presets' default; training's embeddings and head N(0, 0.02) too (train/lm.hpp)
//   t-fixup        Huang et al. 2020 (encoder): Xavier uniform, biases 0, v rows Xavier of their own (d, d)
//                  block, then v, out_proj, linear1, linear2 weights × 0.67·L^(-1/4)
// Then the placement's own scaling: deepnorm multiplies v rows of in_proj, out_proj, linear1, linear2 weights by
// β = (8L)^(-1/4); sub-ln the same ones by γ = sqrt(ln 2L); b2t every weight matrix by L^(-1/2). Last, --init-scale C
// multiplies out_proj.weight and linear2.weight. DyT's α starts at 0.5, ReZero's gate at --rezero-alpha;
// Admin's ω, NormFormer's w_resid and c_attn at 1.
// Every rule reads the parameter's role (params.hpp), recorded when the model created it; the placement's own
// rules are its entry's (placement.hpp: rescale_initial, initial_value, profile).
// Admin's ω is data-dependent: call profile_initialization(model, x0) after initialize() (analyze and jacobian do).
#pragma once
#include <string>
#include <vector>

#include "gradflow/model/config.hpp"
#include "gradflow/model/model.hpp"

namespace gradflow {

// initializer_range of the decoder families' configs (hf-normal's standard deviation)
inline constexpr double kHfInitializerRange = 0.02;

const std::vector<std::string>& init_schemes();
// Draws every held parameter (a deferred weight matrix, WeightResidency::PerBlock, is left to block_weights.hpp).
void initialize(Model& model, const InitConfig& init);
// The one parameter p's initial value (held, allocated), as initialize() draws it from its own stream: the same
// values whenever and in whatever order it is called. init.scheme must be known (initialize() checks it).
void initialize_param(const ModelConfig& cfg, const InitConfig& init, Param& p);
// The data-dependent step of initialization, after initialize(): the placement's profile() — Admin (Liu et al.
// 2020) profiles ω by one forward pass on x0 (src/model/placements/admin.cpp); a no-op for every other placement.
void profile_initialization(Model& model, const Mat& x0);
// T-Fixup (Huang et al. 2020, encoder): 0.67·L^(-1/4) multiplies v_proj, out_proj, linear1, linear2 weights.
double tfixup_scale(const ModelConfig& cfg);
// Seeded N(0, 1) matrix from the named stream ("input", "cotangent", ...).
Mat random_normal(uint64_t seed, const std::string& stream, Index rows, Index cols);

}  // namespace gradflow
