// activation.cpp — relu and exact-erf gelu (see activation.hpp).
#include "gradflow/ops/activation.hpp"

#include <cmath>

#include "gradflow/core/error.hpp"

namespace gradflow {

Activation parse_activation(const std::string& name) {
  if (name == "relu") return Activation::Relu;
  if (name == "gelu") return Activation::Gelu;
  throw Error("unknown activation '" + name + "'; fix: use --activation relu or --activation gelu");
}

std::string to_string(Activation a) { return a == Activation::Relu ? "relu" : "gelu"; }

}  // namespace gradflow

namespace gradflow::ops {
namespace {
constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
double normal_cdf(double z) { return 0.5 * std::erfc(-z * kInvSqrt2); }
double normal_pdf(double z) { return kInvSqrt2Pi * std::exp(-0.5 * z * z); }

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
  // gelu(z) = z·Φ(z); Φ via erfc keeps full relative accuracy for negative z
  return z.unaryExpr([](double v) { return v * normal_cdf(v); });
}

Mat activation_derivative(Activation f, const Mat& z) {
  if (f == Activation::Relu) return z.unaryExpr([](double v) { return v > 0.0 ? 1.0 : 0.0; });
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
