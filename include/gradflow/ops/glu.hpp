// glu.hpp — the gated linear unit of a gated feed-forward branch (Shazeer 2020, "GLU Variants Improve Transformer"):
//   h = act(z1) ⊙ z3     z1 = linear1(x) (the gate), z3 = linear3(x) (the up projection), both (n, d_ff)
// act = silu (SwiGLU: Llama, Qwen, OLMo) or gelu-tanh (GeGLU: Gemma). Token-wise and element-wise, so its Jacobian
// on each input is diagonal per token:  ∂h/∂z1 = diag(z3 ⊙ act'(z1)),  ∂h/∂z3 = diag(act(z1)).
// It has no parameters; the branch's parameter JVP is its JVP on the linears' tangents.
#pragma once
#include <utility>

#include "gradflow/core/jacobian.hpp"
#include "gradflow/core/types.hpp"
#include "gradflow/kernels/cpu_kernels.hpp"
#include "gradflow/ops/activation.hpp"

namespace gradflow::ops {

struct GluCache {
  Mat gate;       // (n, d_ff) act(z1) = ∂h/∂z3
  Mat up_fprime;  // (n, d_ff) z3 ⊙ act'(z1) = ∂h/∂z1
};

Mat glu_forward(Activation f, const Mat& z1, const Mat& z3, GluCache& c, const KernelOps& k = cpu_kernels());
// dh (k stacked copies allowed) -> {dz1, dz3}
std::pair<Mat, Mat> glu_vjp(const GluCache& c, const Mat& dh, const KernelOps& k = cpu_kernels());
// {dz1, dz3} (k stacked copies each) -> dh
Mat glu_jvp(const GluCache& c, const Mat& dz1, const Mat& dz3, const KernelOps& k = cpu_kernels());
// token i: {diag(z3_i ⊙ act'(z1_i)), diag(act(z1_i))}, the Jacobians on z1 and on z3
std::pair<Jacobian, Jacobian> glu_jacobians(const GluCache& c);

}  // namespace gradflow::ops
