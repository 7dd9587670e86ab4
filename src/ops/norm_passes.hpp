// norm_passes.hpp — the forward, VJP and JVP every normalization (layernorm.hpp, rmsnorm.hpp, dyt.hpp) runs through
// the kernels (kernel_ops.hpp: norm_forward, norm_vjp, norm_param_vjp, norm_jvp), written once; `kind` as
// rows::NormCode. Private to src/ops/.
#pragma once
#include "gradflow/kernels/kernel_ops.hpp"
#include "gradflow/ops/norm_cache.hpp"

namespace gradflow::ops::detail {

// y = γ ⊙ x̂ + β (beta may be null); fills the cache (DyT also keeps x, for ∂/∂α).
Mat norm_forward(int kind, const Mat& x, const Mat& gamma, const Mat* beta, double eps, double alpha, NormCache& c,
                 const KernelOps& k);
// dx for stacked cotangents dy; the parameter gradients accumulated (+=; each may be null).
Mat norm_vjp(int kind, const NormCache& c, const Mat& gamma, double alpha, const Mat& dy, Mat* dgamma, Mat* dbeta,
             Mat* dalpha, const KernelOps& k);
// dy for stacked tangents dx.
Mat norm_jvp(int kind, const NormCache& c, const Mat& gamma, double alpha, const Mat& dx, const KernelOps& k);

}  // namespace gradflow::ops::detail
