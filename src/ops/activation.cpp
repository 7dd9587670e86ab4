// activation.cpp — relu, exact-erf gelu, gelu's tanh approximation and silu (see activation.hpp), through the kernels
// (the formulas: kernels/row_math.hpp).
#include "gradflow/ops/activation.hpp"

#include "gradflow/core/error.hpp"
#include "gradflow/kernels/row_math.hpp"

namespace gradflow {

Activation parse_activation(const std::string& name) {
  if (name == "relu") return Activation::Relu;
  if (name == "gelu") return Activation::Gelu;
  if (name == "gelu-tanh") return Activation::GeluTanh;
  if (name == "silu") return Activation::Silu;
  throw Error("unknown activation '" + name + "'; fix: use --activation relu, gelu, gelu-tanh or silu");
}

std::string to_string(Activation a) {
  switch (a) {
    case Activation::Relu: return "relu";
    case Activation::Gelu: return "gelu";
    case Activation::GeluTanh: return "gelu-tanh";
    case Activation::Silu: return "silu";
  }
  return "?";
}

}  // namespace gradflow

namespace gradflow::ops {
namespace {
int code(Activation f) {
  switch (f) {
    case Activation::Relu: return rows::kRelu;
    case Activation::Gelu: return rows::kGelu;
    case Activation::GeluTanh: return rows::kGeluTanh;
    case Activation::Silu: return rows::kSilu;
  }
  return rows::kRelu;
}

// Multiplies each stacked copy of `t` (k*n rows) by the (n, m) matrix `f` element-wise.
Mat stacked_product(const Mat& f, Mat t, const KernelOps& k) {
  k.multiply_tiled(t.data(), f.data(), f.rows(), f.cols(), t.rows());
  return t;
}
}  // namespace

Mat activation_forward(Activation f, const Mat& z, const KernelOps& k) {
  Mat a(z.rows(), z.cols());
  k.activation(code(f), z.data(), z.size(), a.data(), nullptr);
  return a;
}

Mat activation_derivative(Activation f, const Mat& z, const KernelOps& k) {
  Mat fprime(z.rows(), z.cols());
  k.activation(code(f), z.data(), z.size(), nullptr, fprime.data());
  return fprime;
}

Mat activation_vjp(const Mat& fprime, Mat da, const KernelOps& k) { return stacked_product(fprime, std::move(da), k); }

Mat activation_jvp(const Mat& fprime, Mat dz, const KernelOps& k) { return stacked_product(fprime, std::move(dz), k); }

Jacobian activation_jacobian(const Mat& fprime) {
  std::vector<Mat> blocks(static_cast<size_t>(fprime.rows()));
  for (Index i = 0; i < fprime.rows(); ++i) blocks[static_cast<size_t>(i)] = fprime.row(i).asDiagonal();
  return Jacobian::tokenwise(std::move(blocks));
}

}  // namespace gradflow::ops
