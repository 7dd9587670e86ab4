// parametrization.hpp — how initialization, forward multipliers and Adam's hyperparameters scale with width and
// depth (--parametrization sp|mup|depth-mup|completep, --base-width W0, --base-depth L0). docs/math.md §15 holds the
// table with its sources; in short, with m_N = d/W0 (every width of the model scales with d: d_ff and the head width
// too, the head count fixed) and m_L = L/L0:
//   sp         today's model, bit for bit (no factor at all)
//   mup        width (Yang et al. 2021, Tensor Programs V, Table 8; microsoft/mup's MuReadout and MuAdam):
//              hidden weight matrices' init std ∝ m_N^(-1/2) (the fan-in schemes already are; gpt2's fixed 0.02 is
//              multiplied by it), biases' init width-independent (× m_N^(1/2) on a fan-in draw), Adam lr of the
//              hidden matrices × m_N^(-1), their weight decay × m_N; attention logits × √e0/e (e0 = e/m_N) instead
//              of 1/√e; the readout's logits × m_N^(-1) and its init std width-independent (train).
//   depth-mup  mup and α = 1/2 (Yang et al. 2023, Tensor Programs VI, Table 1; Dey et al. 2025, Table 1 at α = 1/2):
//   completep  mup and α = 1   (Dey et al. 2025, Table 1; EleutherAI/nanoGPT-mup's completep branch):
//              every residual branch × m_L^(-α); the lr of the blocks' parameters (weights, biases, norms,
//              gates) × m_L^(α-1); Adam's ε of the blocks' parameters × m_N^(-1)·m_L^(-α); gpt2's own 1/√(2L)
//              on out_proj and linear2 dropped (the branch multiplier sets the depth factor instead).
#pragma once
#include <string>

#include "gradflow/core/params.hpp"
#include "gradflow/core/types.hpp"

namespace gradflow {

enum class ParametrizationKind { Sp, Mup, DepthMup, CompleteP };
ParametrizationKind parse_parametrization(const std::string& name);  // Error naming the choices
inline std::string to_string(ParametrizationKind k) {  // inline: the io readers' fuzz build links no model code
  return k == ParametrizationKind::Mup         ? "mup"
         : k == ParametrizationKind::DepthMup  ? "depth-mup"
         : k == ParametrizationKind::CompleteP ? "completep"
                                               : "sp";
}

struct Parametrization {
  ParametrizationKind kind = ParametrizationKind::Sp;
  Index base_width = 0;  // --base-width W0: the width the hyperparameters were tuned at (0 under sp)
  Index base_depth = 0;  // --base-depth L0: the depth they were tuned at (0 under sp and mup)

  bool scales_width() const { return kind != ParametrizationKind::Sp; }
  bool scales_depth() const { return kind == ParametrizationKind::DepthMup || kind == ParametrizationKind::CompleteP; }
  double alpha() const;  // the depth exponent α: 1/2 (depth-mup), 1 (completep), else 0
};

// The factors one model (width d, depth L, head width e) takes from its parametrization; all 1 under sp.
struct ParametrizationFactors {
  double width_mult = 1;   // m_N = d/W0
  double depth_mult = 1;   // m_L = L/L0
  double branch = 1;       // every residual branch × m_L^(-α)
  double readout = 1;      // the output logits × m_N^(-1) (train's readout)
  // Adam per parameter role: lr, ε and weight decay multipliers (in_block: a parameter of a residual block, not the
  // embeddings, the readout or the final norm)
  double lr(ParamRole role, bool in_block) const;
  double eps(bool in_block) const;
  double weight_decay(ParamRole role) const;
  // The initialization factor on the scheme's draw (init.cpp): a hidden weight matrix drawn from a fixed std
  // (gpt2) × m_N^(-1/2); a bias drawn U(±1/√fan_in) (torch, xavier) × m_N^(1/2); else 1.
  double init(ParamRole role, const std::string& scheme) const;
  double readout_init() const;  // train's untied readout, drawn U(±1/√d): × m_N^(1/2) (width-independent std)
  Parametrization p;
};

// m_N, m_L and the multipliers for a model of width d and depth L (validates W0, L0: Error naming the option).
ParametrizationFactors parametrization_factors(const Parametrization& p, Index d_model, Index layers);
// μP's attention logit scale √e0/e with e0 = e/m_N (Tensor Programs V, §B.1: α_attn·√d_head,0/d_head, α_attn = 1):
// SP's 1/√e at the base width.
double mup_logit_scale(Index head_dim, double width_mult);

}  // namespace gradflow
