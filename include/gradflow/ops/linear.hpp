// linear.hpp — y = x Wᵀ + b, token-wise (PyTorch nn.Linear).
// Shapes: x (n, in), W (out, in), b (1, out), y (n, out). Stacked tangents (k*n, in) are allowed.
// Gradient rule (everywhere in gradflow): parameter gradients are accumulated (+=), activation
// gradients are returned fresh. Every op of src/ops/ runs its arithmetic through the kernels `k` (kernel_ops.hpp;
// the Model passes its own; the default is the double-precision reference, cpu_kernels()).
#pragma once
#include "gradflow/core/jacobian.hpp"
#include "gradflow/core/types.hpp"
#include "gradflow/kernels/cpu_kernels.hpp"

namespace gradflow::ops {

Mat linear_forward(const Mat& x, const Mat& W, const Mat* b, const KernelOps& k = cpu_kernels());
// forward: y = x Wᵀ + b  =>  dx = dy W;  dW += dyᵀ x;  db += Σ_rows dy   (dW, db may be null)
Mat linear_vjp(const Mat& x, const Mat& W, const Mat& dy, Mat* dW, Mat* db, const KernelOps& k = cpu_kernels());
// forward: y = x Wᵀ + b  =>  dy = dx Wᵀ
Mat linear_jvp(const Mat& W, const Mat& dx, const KernelOps& k = cpu_kernels());
// forward: y = x Wᵀ + b  =>  the parameters' part of dy for tangents dW, db (either may be null): x dWᵀ + db
Mat linear_param_jvp(const Mat& x, const Mat* dW, const Mat* db, Index out, const KernelOps& k = cpu_kernels());
// dy_i/dx_i = W for every token i
Jacobian linear_jacobian(const Mat& W, Index n_tokens);

}  // namespace gradflow::ops
