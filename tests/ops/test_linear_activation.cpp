// test_linear_activation.cpp — linear and activation ops: Jacobians vs finite differences, jvp/vjp vs J,
// parameter gradients vs finite differences.
#include "derivative_checks.hpp"
#include "gradflow/ops/activation.hpp"
#include "gradflow/ops/linear.hpp"

using namespace gradflow;
using namespace gradflow::test;

TEST_CASE("linear: derivatives", "[ops][linear]") {
  const Mat W = random_mat(5, 4, 2), b = random_mat(1, 5, 3);
  const Mat x = random_mat(3, 4, 4);
  check_map(
      "linear", [&](const Mat& v) { return ops::linear_forward(v, W, &b); },
      [&](const Mat& v) { return ops::linear_jvp(W, v); },
      [&](const Mat& u) { return ops::linear_vjp(x, W, u, nullptr, nullptr); },
      [&] { return ops::linear_jacobian(W, x.rows()).to_dense(); }, x);
}

TEST_CASE("linear: parameter gradients vs finite differences", "[ops][linear]") {
  Mat W = random_mat(5, 4, 2), b = random_mat(1, 5, 3);
  const Mat x = random_mat(3, 4, 4), g = random_mat(3, 5, 5);
  Mat dW = Mat::Zero(5, 4), db = Mat::Zero(1, 5);
  ops::linear_vjp(x, W, g, &dW, &db);
  const Mat fdW = unflat(fd_jacobian([&](const Mat& w) { return Mat::Constant(1, 1, g.cwiseProduct(ops::linear_forward(x, w, &b)).sum()); }, W).row(0), 5, 4);
  const Mat fdb = unflat(fd_jacobian([&](const Mat& bb) { return Mat::Constant(1, 1, g.cwiseProduct(ops::linear_forward(x, W, &bb)).sum()); }, b).row(0), 1, 5);
  CHECK(rel_err(dW, fdW) <= kFdTol);
  CHECK(rel_err(db, fdb) <= kFdTol);
}

TEST_CASE("activations: derivatives", "[ops][activation]") {
  for (Activation a : {Activation::Relu, Activation::Gelu, Activation::GeluTanh, Activation::Silu}) {
    Mat z = random_mat(3, 6, 7, 2.0);
    // keep relu's kink away from the finite-difference stencil
    z = z.unaryExpr([](double v) { return std::abs(v) < 1e-3 ? 0.5 : v; });
    const Mat fp = ops::activation_derivative(a, z);
    check_map(
        "activation " + to_string(a), [&](const Mat& v) { return ops::activation_forward(a, v); },
        [&](const Mat& v) { return ops::activation_jvp(fp, v); }, [&](const Mat& u) { return ops::activation_vjp(fp, u); },
        [&] { return ops::activation_jacobian(fp).to_dense(); }, z);
  }
}

TEST_CASE("gelu is the exact erf form, matching known values", "[ops][activation]") {
  Mat z(1, 3);
  z << -1.0, 0.5, 3.0;
  const Mat y = ops::activation_forward(Activation::Gelu, z);
  // 0.5 z (1 + erf(z/√2)), values from PyTorch's F.gelu in float64
  CHECK(y(0, 0) == Approx(-0.15865525393145702).epsilon(kClosedFormTol));
  CHECK(y(0, 1) == Approx(0.34573123063700656).epsilon(kClosedFormTol));
  CHECK(y(0, 2) == Approx(2.99595030590511).epsilon(kClosedFormTol));
}

TEST_CASE("silu is z·sigmoid(z), matching known values", "[ops][activation]") {
  Mat z(1, 4);
  z << -1.0, 0.5, 3.0, -40.0;
  const Mat y = ops::activation_forward(Activation::Silu, z);
  // values from PyTorch's F.silu in float64
  CHECK(y(0, 0) == Approx(-0.2689414213699951).epsilon(kClosedFormTol));
  CHECK(y(0, 1) == Approx(0.3112296656009273).epsilon(kClosedFormTol));
  CHECK(y(0, 2) == Approx(2.8577223804672998).epsilon(kClosedFormTol));
  CHECK(y(0, 3) == Approx(-1.6993417021166355e-16).epsilon(kClosedFormTol));  // far left: tiny, full relative accuracy
  Mat z0 = Mat::Zero(1, 1);
  CHECK(ops::activation_derivative(Activation::Silu, z0)(0, 0) == 0.5);
  CHECK(parse_activation("silu") == Activation::Silu);
  CHECK(to_string(Activation::Silu) == "silu");
}

TEST_CASE("gelu-tanh is GPT-2's gelu_new and matches known values", "[ops][activation]") {
  Mat z(1, 4);
  z << -1.0, 0.5, 3.0, -10.0;
  const Mat y = ops::activation_forward(Activation::GeluTanh, z);
  // 0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))), values from PyTorch's F.gelu(approximate='tanh') in float64
  CHECK(y(0, 0) == Approx(-0.15880800939172324).epsilon(kClosedFormTol));
  CHECK(y(0, 1) == Approx(0.34571400982514394).epsilon(kClosedFormTol));
  CHECK(y(0, 2) == Approx(2.996362607918227).epsilon(kClosedFormTol));
  // far left the value is tiny but exact in relative terms (the sigmoid form; 1 + tanh would cancel to 0)
  const double u = 0.79788456080286535588 * (-10.0 + 0.044715 * -1000.0);
  CHECK(y(0, 3) == Approx(-10.0 / (1.0 + std::exp(-2.0 * u))).epsilon(kClosedFormChainTol));  // about -1e-37
  CHECK(y(0, 3) < 0.0);
  // the derivative at 0 is 1/2, and it differs from exact gelu's elsewhere
  Mat z0 = Mat::Zero(1, 1);
  CHECK(ops::activation_derivative(Activation::GeluTanh, z0)(0, 0) == 0.5);
  CHECK(ops::activation_derivative(Activation::GeluTanh, z)(0, 1) !=
        ops::activation_derivative(Activation::Gelu, z)(0, 1));
}
