// dyt.hpp — Dynamic Tanh (Zhu et al. 2025): y = γ ⊙ tanh(α·x) + β, α a learnable scalar. Element-wise, so its
// Jacobian is token-wise (block diagonal, each block diagonal).
#pragma once
#include "gradflow/core/jacobian.hpp"
#include "gradflow/kernels/cpu_kernels.hpp"
#include "gradflow/ops/norm_cache.hpp"

namespace gradflow::ops {
// Each function below accepts stacked tangents/cotangents (k*n rows, see types.hpp).
Mat dyt_forward(const Mat& x, double alpha, const Mat& gamma, const Mat& beta, NormCache& c,
                const KernelOps& k = cpu_kernels());
Mat dyt_vjp(const NormCache& c, double alpha, const Mat& gamma, const Mat& dy, Mat* dalpha, Mat* dgamma, Mat* dbeta,
            const KernelOps& k = cpu_kernels());
Mat dyt_jvp(const NormCache& c, double alpha, const Mat& gamma, const Mat& dx, const KernelOps& k = cpu_kernels());
Jacobian dyt_jacobian(const NormCache& c, double alpha, const Mat& gamma);
}  // namespace gradflow::ops
