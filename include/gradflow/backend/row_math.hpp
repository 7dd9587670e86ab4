// row_math.hpp — the per-element arithmetic of the cotangent kernels, written once for the CPU and the GPU: each
// function is `__host__ __device__` under nvcc (src/backend/cuda/stack_kernels.cu: one thread block per row, the
// row's two sums by a block reduction) and plain inline C++ elsewhere (src/backend/cpu_kernel_ops.cpp: the same
// functions in a loop per row), so the CPU tests cover the GPU's arithmetic (tests/backend/test_device_chain.cpp
// checks the kernels' chain against the model's own VJPs). Only the order of the row sums differs between the two.
// No Eigen and nothing of std:: that device code lacks.
//   LayerNorm (x̂ = (x − μ)·r):  dx_j = r · (g_j − mean(g) − x̂_j · mean(g ⊙ x̂)),  g = dy ⊙ γ
//   RMSNorm   (x̂ = x·r):        dx_j = r · (g_j − x̂_j · mean(g ⊙ x̂))
//   DyT       (x̂ = tanh(α·x)):  dx_j = α · g_j · (1 − x̂_j²)                        (no sums)
//   softmax row p, upstream dp:  ds_j = scale · p_j · (dp_j − Σ_k p_k dp_k)   (also the JVP: dP = P ⊙ (dS − rowsum(P ⊙ dS)))
// and the norms' JVPs (norm_jvp_element below).
// (src/ops/{layernorm,rmsnorm,dyt,attention}.cpp are the model's own implementations; docs/math.md derives them.)
#pragma once

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
  if (kind == kDyT) return alpha * g * (1.0 - xhat * xhat);
  if (kind == kRMSNorm) return rstd * (g - xhat * mean_gx);
  return rstd * (g - mean_g - xhat * mean_gx);
}

// The JVP (forward tangent) dy_j from dx_j, x̂_j and the row's sums: mean_dx = Σdx/d and proj = Σ x̂·(dx − mean_dx)/d for
// LayerNorm (one pass: (Σ x̂·dx − mean_dx·Σ x̂)/d), Σ x̂·dx/d for RMSNorm; unused for DyT:
//   LayerNorm: dy_j = γ_j·r·(dx_j − mean_dx − x̂_j·proj);  RMSNorm: dy_j = γ_j·r·(dx_j − x̂_j·proj);
//   DyT: dy_j = γ_j·α·(1 − x̂_j²)·dx_j.
GRADFLOW_HD inline double norm_jvp_element(int kind, double dx, double xhat, double gamma, double rstd, double alpha,
                                           double mean_dx, double proj) {
  if (kind == kDyT) return alpha * dx * (1.0 - xhat * xhat) * gamma;
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
  return scale * p * (dp - s);
}

// One row in turn (the CPU's loop; the device splits the same sums over a block's threads).
GRADFLOW_HD inline void norm_vjp_row(int kind, const double* xhat, double rstd, const double* gamma, double alpha,
                                     const double* dy, double* dx, long d) {
  double sum_g = 0, sum_gx = 0;
  if (kind != kDyT)
    for (long j = 0; j < d; ++j) {
      const double g = norm_g(dy[j], gamma[j]);
      sum_g += g;
      sum_gx += g * xhat[j];
    }
  const double dd = static_cast<double>(d);
  for (long j = 0; j < d; ++j)
    dx[j] = norm_vjp_element(kind, norm_g(dy[j], gamma[j]), xhat[j], rstd, alpha, sum_g / dd, sum_gx / dd);
}

GRADFLOW_HD inline void norm_jvp_row(int kind, const double* xhat, double rstd, const double* gamma, double alpha,
                                     const double* dx, double* dy, long d) {
  double sum_dx = 0, sum_xdx = 0, sum_x = 0;
  if (kind != kDyT)
    for (long j = 0; j < d; ++j) {
      sum_dx += dx[j];
      sum_xdx += xhat[j] * dx[j];
      sum_x += xhat[j];
    }
  double mean_dx = 0, proj = 0;
  norm_jvp_means(kind, sum_dx, sum_xdx, sum_x, d, &mean_dx, &proj);
  for (long j = 0; j < d; ++j) dy[j] = norm_jvp_element(kind, dx[j], xhat[j], gamma[j], rstd, alpha, mean_dx, proj);
}

GRADFLOW_HD inline void softmax_vjp_row(const double* p, double* dp, long n, double scale) {
  double s = 0;
  for (long j = 0; j < n; ++j) s += p[j] * dp[j];
  for (long j = 0; j < n; ++j) dp[j] = softmax_vjp_element(p[j], dp[j], s, scale);
}

}  // namespace gradflow::rows
