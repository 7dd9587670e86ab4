// rmsnorm.hpp — RMSNorm (Zhang & Sennrich 2019): y = γ ⊙ x / sqrt(mean(x²) + ε), over each token (row)
// separately, so its Jacobian is token-wise (block diagonal).
#pragma once
#include "gradflow/core/jacobian.hpp"
#include "gradflow/kernels/cpu_kernels.hpp"
#include "gradflow/ops/norm_cache.hpp"

namespace gradflow::ops {
// Each function below accepts stacked tangents/cotangents (k*n rows, see types.hpp).
Mat rmsnorm_forward(const Mat& x, const Mat& gamma, double eps, NormCache& c, const KernelOps& k = cpu_kernels());
Mat rmsnorm_vjp(const NormCache& c, const Mat& gamma, const Mat& dy, Mat* dgamma,
                const KernelOps& k = cpu_kernels());
Mat rmsnorm_jvp(const NormCache& c, const Mat& gamma, const Mat& dx, const KernelOps& k = cpu_kernels());
Jacobian rmsnorm_jacobian(const NormCache& c, const Mat& gamma);
}  // namespace gradflow::ops
