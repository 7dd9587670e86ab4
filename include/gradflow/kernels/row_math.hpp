// row_math.hpp — the per-element arithmetic of the kernels (kernel_ops.hpp), written once for the CPU and the GPU:
// each function is `__host__ __device__` under nvcc (src/backend/cuda/stack_kernels.cu: one thread block per row, the
// row's sums by a block reduction) and plain inline C++ elsewhere (src/kernels/cpu_kernels.cpp: the row's sums by
// Eigen, the elements by these functions), so the CPU tests cover the GPU's arithmetic (tests/backend/
// test_device_chain.cpp checks the kernels' chain against the model's VJPs). Only the order of the row sums differs
// between the two. Each formula is written in the association the model's passes have always used (so the CPU's
// reports keep their bits: x86-64 without FMA rounds a scalar expression as Eigen's packets do).
// No Eigen and nothing of std:: that device code lacks.
//   LayerNorm (x̂ = (x − μ)·r):  dx_j = r · (g_j − mean(g) − x̂_j · mean(g ⊙ x̂)),  g = dy ⊙ γ
//   RMSNorm   (x̂ = x·r):        dx_j = r · (g_j − x̂_j · mean(g ⊙ x̂))
//   DyT       (x̂ = tanh(α·x)):  dx_j = α · (g_j · (1 − x̂_j²))                      (no sums)
//   softmax row p, upstream dp:  ds_j = (p_j · (dp_j − Σ_k p_k dp_k)) · scale   (also the JVP: dP = P ⊙ (dS − rowsum(P ⊙ dS)))
// and the norms' JVPs (norm_jvp_element below).
// (src/ops/{layernorm,rmsnorm,dyt,attention}.cpp are the model's own implementations; docs/math.md derives them.)
#pragma once
#include <math.h>  // erfc, exp: the C library's on the host, CUDA's in device code

#if defined(__CUDACC__)
#define GRADFLOW_HD __host__ __device__
#else
#define GRADFLOW_HD
#endif

namespace gradflow::rows {

enum NormCode : int { kLayerNorm = 0, kRMSNorm = 1, kDyT = 2 };  // NormKind's order

// g_j = dy_j·γ_j, the quantity both sums run over (Σ g_j and Σ g_j·x̂_j).
GRADFLOW_HD inline double norm_g(double dy, double gamma) { return dy * gamma; }

// dx_j from g_j, x̂_j and the row's means (mean_g = Σg/d, mean_gx = Σg·x̂/d; unused for DyT).
GRADFLOW_HD inline double norm_vjp_element(int kind, double g, double xhat, double rstd, double alpha, double mean_g,
                                           double mean_gx) {
  if (kind == kDyT) return alpha * (g * (1.0 - xhat * xhat));
  if (kind == kRMSNorm) return rstd * (g - xhat * mean_gx);
  return rstd * (g - mean_g - xhat * mean_gx);
}

// The JVP (forward tangent) dy_j from dx_j, x̂_j and the row's sums: mean_dx = Σdx/d and proj = Σ x̂·(dx − mean_dx)/d for
// LayerNorm (one pass: (Σ x̂·dx − mean_dx·Σ x̂)/d), Σ x̂·dx/d for RMSNorm; unused for DyT:
//   LayerNorm: dy_j = γ_j·r·(dx_j − mean_dx − x̂_j·proj);  RMSNorm: dy_j = γ_j·r·(dx_j − x̂_j·proj);
//   DyT: dy_j = α·((dx_j·(1 − x̂_j²))·γ_j).
GRADFLOW_HD inline double norm_jvp_element(int kind, double dx, double xhat, double gamma, double rstd, double alpha,
                                           double mean_dx, double proj) {
  if (kind == kDyT) return alpha * ((dx * (1.0 - xhat * xhat)) * gamma);
  if (kind == kRMSNorm) return rstd * (dx - xhat * proj) * gamma;
  return rstd * ((dx - mean_dx) - xhat * proj) * gamma;
}

// mean_dx and proj of norm_jvp_element from the row's sums Σdx, Σ x̂·dx and Σ x̂.
GRADFLOW_HD inline void norm_jvp_means(int kind, double sum_dx, double sum_xdx, double sum_x, long d, double* mean_dx,
                                       double* proj) {
  const double dd = static_cast<double>(d);
  *mean_dx = sum_dx / dd;
  *proj = kind == kLayerNorm ? (sum_xdx - *mean_dx * sum_x) / dd : sum_xdx / dd;
}

// ds_j from p_j, dp_j and the row's s = Σ_k p_k·dp_k.
GRADFLOW_HD inline double softmax_vjp_element(double p, double dp, double s, double scale) {
  return (p * (dp - s)) * scale;
}

// --- activations (ops/activation.hpp): relu, exact-erf gelu, gelu's tanh approximation, silu ----------------------
// kTanh: no feed-forward activation, the attention logits' soft-cap (ops/attention.cpp)
enum ActivationCode : int { kRelu = 0, kGelu = 1, kGeluTanh = 2, kSilu = 3, kTanh = 4 };  // Activation's order

// Φ via erfc keeps full relative accuracy for negative z; φ the standard normal density.
GRADFLOW_HD inline double normal_cdf(double z) { return 0.5 * erfc(-z * 0.70710678118654752440); }
GRADFLOW_HD inline double normal_pdf(double z) { return 0.39894228040143267794 * exp(-0.5 * z * z); }
// gelu-tanh: u = √(2/π)·(z + 0.044715·z³); ½·z·(1 + tanh u) = z·σ(2u), written with σ so that large negative z
// keeps full relative accuracy (1 + tanh u cancels there). σ(t) = 1/(1 + e^(−t)).
GRADFLOW_HD inline double gelu_tanh_u(double z) { return 0.79788456080286535588 * (z + 0.044715 * z * z * z); }
GRADFLOW_HD inline double sigmoid(double t) { return 1.0 / (1.0 + exp(-t)); }

GRADFLOW_HD inline double activation_value(int kind, double z) {
  if (kind == kRelu) return z > 0.0 ? z : 0.0;  // (the CPU's relu is Eigen's cwiseMax, the same for every number)
  if (kind == kGeluTanh) return z * sigmoid(2.0 * gelu_tanh_u(z));
  if (kind == kSilu) return z * sigmoid(z);
  if (kind == kTanh) return tanh(z);
  return z * normal_cdf(z);
}

// f'(z): relu's is 0 at z = 0 (as PyTorch); gelu' = Φ(z) + z·φ(z); d/dz [z·σ(2u)] = σ(2u) + z·σ(2u)·σ(−2u)·2u',
// u' = √(2/π)·(1 + 3·0.044715·z²); silu' = σ(z) + z·σ(z)·σ(−z).
GRADFLOW_HD inline double activation_derivative(int kind, double z) {
  if (kind == kRelu) return z > 0.0 ? 1.0 : 0.0;
  if (kind == kGeluTanh) {
    const double t = 2.0 * gelu_tanh_u(z);
    const double s = sigmoid(t), s_neg = sigmoid(-t);
    return s + z * s * s_neg * 2.0 * 0.79788456080286535588 * (1.0 + 3.0 * 0.044715 * z * z);
  }
  if (kind == kSilu) {
    const double s = sigmoid(z);
    return s + z * s * sigmoid(-z);
  }
  if (kind == kTanh) {
    const double t = tanh(z);
    return 1.0 - t * t;
  }
  return normal_cdf(z) + z * normal_pdf(z);
}

}  // namespace gradflow::rows
