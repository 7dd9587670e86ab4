// norm.hpp — the normalizations a block can use, behind one small dispatch type (the ops themselves:
// layernorm.hpp, rmsnorm.hpp, dyt.hpp).
//   layernorm (Ba et al. 2016, PyTorch nn.LayerNorm): y = γ ⊙ (x − μ)/sqrt(σ² + ε) + β, σ² biased
//   rmsnorm   (Zhang & Sennrich 2019):                y = γ ⊙ x / sqrt(mean(x²) + ε)
//   dyt       (Zhu et al. 2025, Dynamic Tanh):        y = γ ⊙ tanh(α·x) + β, α a learnable scalar
// With a unit offset (Gemma's RMSNorm, --norm-offset) γ = 1 + w for the stored parameter w.
// All act on each token (row) separately, so their Jacobians are token-wise (block diagonal).
#pragma once
#include <string>

#include "gradflow/core/jacobian.hpp"
#include "gradflow/core/params.hpp"
#include "gradflow/core/types.hpp"
#include "gradflow/kernels/cpu_kernels.hpp"
#include "gradflow/ops/norm_cache.hpp"

namespace gradflow {

enum class NormKind { LayerNorm, RMSNorm, DyT };
NormKind parse_norm_kind(const std::string& name);  // "layernorm" | "rmsnorm" | "dyt", else Error
std::string to_string(NormKind k);

// One normalization layer in a model: its kind and where its parameters live in the ParamStore.
struct NormLayer {
  NormKind kind = NormKind::LayerNorm;
  int weight = -1;  // γ (1, d)
  int bias = -1;    // β (1, d); -1 for rmsnorm
  int alpha = -1;   // dyt's α (1, 1); -1 otherwise
  double eps = 1e-5;
  // --norm-offset (Gemma): the parameter is stored as w and the scale is γ = 1 + w (initialized w = 0, so γ = 1).
  // Every derivative is the same function of γ; ∂L/∂w = ∂L/∂γ.
  bool unit_offset = false;
  const KernelOps* kernels = &cpu_kernels();  // what its passes run on (the Model's: Model::use_kernels)
  // Autocast, a norm whose input is of the low type (after a matrix product): the kernels of that type, through
  // which its VJP's dx is cast (the cotangent of a low-precision tensor is of its type). Null otherwise.
  const KernelOps* input_kernels = nullptr;

  Mat forward(const ParamStore& p, const Mat& x, NormCache& c) const;
  Mat vjp(const ParamStore& p, const NormCache& c, const Mat& dy, ParamGrads* g) const;
  Mat jvp(const ParamStore& p, const NormCache& c, const Mat& dx) const;
  // J_x dx + J_θ dθ for an input tangent dx (one copy) and parameter tangents dθ (shaped like the parameters):
  // the parameters' part is x̂ ⊙ dγ + dβ (dyt: dγ ⊙ tanh(αx) + dβ + γ ⊙ (1 − tanh²(αx)) ⊙ x · dα).
  Mat jvp_with_params(const ParamStore& p, const NormCache& c, const Mat& dx, const ParamGrads& dtheta) const;
  Jacobian jacobian(const ParamStore& p, const NormCache& c) const;
  // γ as the forward pass uses it: the weight, or 1 + the weight under unit_offset (a copy, (1, d))
  Mat gamma(const ParamStore& p) const;
};

}  // namespace gradflow
