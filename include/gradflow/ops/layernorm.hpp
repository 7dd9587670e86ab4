// layernorm.hpp — LayerNorm (Ba et al. 2016, PyTorch nn.LayerNorm): y = γ ⊙ (x − μ)/sqrt(σ² + ε) + β, σ² biased,
// over each token (row) separately, so its Jacobian is token-wise (block diagonal).
#pragma once
#include "gradflow/core/jacobian.hpp"
#include "gradflow/kernels/cpu_kernels.hpp"
#include "gradflow/ops/norm_cache.hpp"

namespace gradflow::ops {
// Each function below accepts stacked tangents/cotangents (k*n rows, see types.hpp).
Mat layernorm_forward(const Mat& x, const Mat& gamma, const Mat& beta, double eps, NormCache& c,
                      const KernelOps& k = cpu_kernels());
Mat layernorm_vjp(const NormCache& c, const Mat& gamma, const Mat& dy, Mat* dgamma, Mat* dbeta,
                  const KernelOps& k = cpu_kernels());
Mat layernorm_jvp(const NormCache& c, const Mat& gamma, const Mat& dx, const KernelOps& k = cpu_kernels());
Jacobian layernorm_jacobian(const NormCache& c, const Mat& gamma);
}  // namespace gradflow::ops
