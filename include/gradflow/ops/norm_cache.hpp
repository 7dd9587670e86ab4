// norm_cache.hpp — what a normalization's forward saves for its derivatives, shared by the three norm ops
// (layernorm.hpp, rmsnorm.hpp, dyt.hpp) and the NormLayer that dispatches to them (norm.hpp).
#pragma once
#include "gradflow/core/types.hpp"

namespace gradflow {

// What a norm's forward saves for its derivatives (everything else is recomputed).
struct NormCache {
  Mat xhat;  // (n, d) layernorm: (x − μ)·r; rmsnorm: x·r; dyt: tanh(α·x)
  Vec rstd;  // (n)    layernorm: r = 1/sqrt(σ² + ε); rmsnorm: r = 1/sqrt(mean(x²) + ε); dyt: unused
  Mat x;     // (n, d) dyt only: the input (for ∂/∂α)
};

}  // namespace gradflow
