// activation.cpp — relu, exact-erf gelu and gelu's tanh approximation (see activation.hpp).
#include "gradflow/ops/activation.hpp"

#include <cmath>

#include "gradflow/core/error.hpp"

namespace gradflow {

Activation parse_activation(const std::string& name) {
  if (name == "relu") return Activation::Relu;
  if (name == "gelu") return Activation::Gelu;
  if (name == "gelu-tanh") return Activation::GeluTanh;
  throw Error("unknown activation '" + name + "'; fix: use --activation relu, gelu or gelu-tanh");
}

std::string to_string(Activation a) {
  switch (a) {
    case Activation::Relu: return "relu";
    case Activation::Gelu: return "gelu";
    case Activation::GeluTanh: return "gelu-tanh";
  }
  return "?";
}

}  // namespace gradflow

namespace gradflow::ops {
namespace {
constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
double normal_cdf(double z) { return 0.5 * std::erfc(-z * kInvSqrt2); }
double normal_pdf(double z) { return kInvSqrt2Pi * std::exp(-0.5 * z * z); }

// gelu-tanh: u = √(2/π)·(z + 0.044715·z³); ½·z·(1 + tanh u) = z·σ(2u), written with σ so that large negative z
// keeps full relative accuracy (1 + tanh u cancels there). σ(t) = 1/(1 + e^(−t)).
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kTanhCubic = 0.044715;
double gelu_tanh_u(double z) { return kSqrt2OverPi * (z + kTanhCubic * z * z * z); }
double sigmoid(double t) { return 1.0 / (1.0 + std::exp(-t)); }
double gelu_tanh(double z) { return z * sigmoid(2.0 * gelu_tanh_u(z)); }
// d/dz [z·σ(2u)] = σ(2u) + z·σ(2u)·σ(−2u)·2u',  u' = √(2/π)·(1 + 3·0.044715·z²)
double gelu_tanh_derivative(double z) {
  const double t = 2.0 * gelu_tanh_u(z);
  const double s = sigmoid(t), s_neg = sigmoid(-t);
  return s + z * s * s_neg * 2.0 * kSqrt2OverPi * (1.0 + 3.0 * kTanhCubic * z * z);
}

// Multiplies each stacked copy of `t` (k*n rows) by the (n, m) matrix `f` element-wise.
Mat stacked_product(const Mat& f, const Mat& t) {
  Mat out(t.rows(), t.cols());
  const Index n = f.rows();
  for (Index c = 0; c < t.rows() / n; ++c) out.middleRows(c * n, n) = t.middleRows(c * n, n).cwiseProduct(f);
  return out;
}
}  // namespace

Mat activation_forward(Activation f, const Mat& z) {
  if (f == Activation::Relu) return z.cwiseMax(0.0);
  if (f == Activation::GeluTanh) return z.unaryExpr([](double v) { return gelu_tanh(v); });
  // gelu(z) = z·Φ(z); Φ via erfc keeps full relative accuracy for negative z
  return z.unaryExpr([](double v) { return v * normal_cdf(v); });
}

Mat activation_derivative(Activation f, const Mat& z) {
  if (f == Activation::Relu) return z.unaryExpr([](double v) { return v > 0.0 ? 1.0 : 0.0; });
  if (f == Activation::GeluTanh) return z.unaryExpr([](double v) { return gelu_tanh_derivative(v); });
  return z.unaryExpr([](double v) { return normal_cdf(v) + v * normal_pdf(v); });
}

Mat activation_vjp(const Mat& fprime, const Mat& da) { return stacked_product(fprime, da); }

Mat activation_jvp(const Mat& fprime, const Mat& dz) { return stacked_product(fprime, dz); }

Jacobian activation_jacobian(const Mat& fprime) {
  std::vector<Mat> blocks(static_cast<size_t>(fprime.rows()));
  for (Index i = 0; i < fprime.rows(); ++i) blocks[static_cast<size_t>(i)] = fprime.row(i).asDiagonal();
  return Jacobian::tokenwise(std::move(blocks));
}

}  // namespace gradflow::ops
