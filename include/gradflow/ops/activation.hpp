// activation.hpp — element-wise activations of the feed-forward sublayer.
// relu(z) = max(z, 0) (derivative 0 at z = 0, as PyTorch); gelu(z) = z·Φ(z) = ½·z·(1 + erf(z/√2)),
// the exact erf form PyTorch uses by default; gelu'(z) = Φ(z) + z·φ(z).
// gelu-tanh(z) = ½·z·(1 + tanh(√(2/π)·(z + 0.044715·z³))): PyTorch's gelu(approximate='tanh'), Hugging Face's
// "gelu_new" and "gelu_pytorch_tanh" (GPT-2's activation). silu(z) = z·σ(z) (SwiGLU's gate; PyTorch's F.silu).
#pragma once
#include <string>

#include "gradflow/core/jacobian.hpp"
#include "gradflow/core/types.hpp"
#include "gradflow/kernels/cpu_kernels.hpp"

namespace gradflow {
enum class Activation { Relu, Gelu, GeluTanh, Silu };
Activation parse_activation(const std::string& name);  // "relu" | "gelu" | "gelu-tanh" | "silu", else Error
std::string to_string(Activation a);
}  // namespace gradflow

namespace gradflow::ops {

Mat activation_forward(Activation f, const Mat& z, const KernelOps& k = cpu_kernels());
Mat activation_derivative(Activation f, const Mat& z, const KernelOps& k = cpu_kernels());  // f'(z), element-wise, shape of z
// forward: a = f(z)  =>  dz = da ⊙ f'(z)   (da may hold k stacked copies; fprime is (n, m))
// (da, dz by value: pass an rvalue and the product is formed in its storage)
Mat activation_vjp(const Mat& fprime, Mat da, const KernelOps& k = cpu_kernels());
// forward: a = f(z)  =>  da = f'(z) ⊙ dz  (the same product: the Jacobian is diagonal)
Mat activation_jvp(const Mat& fprime, Mat dz, const KernelOps& k = cpu_kernels());
// token i: diag(f'(z_i))
Jacobian activation_jacobian(const Mat& fprime);

}  // namespace gradflow::ops
