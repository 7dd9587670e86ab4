// test_precision_kernels.cpp — the kernels of an emulated precision (kernels/precision_kernels.hpp): every value they
// store is a value of the type; a GEMM multiplies values of the type in float32 and rounds once, checked on
// constructed products whose float32 answer is exact (so no summation order can change it); f64 is the reference's
// bits.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "gradflow/core/rng.hpp"
#include "gradflow/kernels/cpu_kernels.hpp"
#include "gradflow/kernels/precision_kernels.hpp"
#include "gradflow/kernels/row_math.hpp"

using namespace gradflow;

namespace {

double p2(int e) { return std::ldexp(1.0, e); }

Mat normal(Index r, Index c, uint64_t seed) {
  Mat m(r, c);
  Rng(seed, "precision-kernels").fill_normal(m, 1.0);
  return m;
}

bool all_representable(Precision p, const Mat& m) {
  for (Index i = 0; i < m.size(); ++i)
    if (!representable(p, m.data()[i])) return false;
  return true;
}

// C = A·B (row-major, no transposes) through k
Mat product(const KernelOps& k, const Mat& A, const Mat& B) {
  Mat C(A.rows(), B.cols());
  k.gemm(A.rows(), B.cols(), A.cols(), 1.0, {A.data(), A.cols()}, {B.data(), B.cols()}, 0.0, C.data(), C.cols(), 0, 1);
  return C;
}

}  // namespace

TEST_CASE("precision kernels: every stored value is a value of the type", "[precision]") {
  const Index n = 6, d = 8;
  for (const Precision p : {Precision::F32, Precision::BF16, Precision::F16}) {
    INFO(to_string(p));
    const auto k = make_precision_kernels(p, cpu_kernels());
    Mat x = normal(n, d, 1), w = normal(d, d, 2), gamma = normal(1, d, 3);
    round_in_place(p, x);
    round_in_place(p, w);
    round_in_place(p, gamma);
    CHECK(all_representable(p, product(*k, x, w)));
    Mat xhat(n, d), rstd(n, 1);
    k->norm_forward(rows::kLayerNorm, x.data(), n, d, 1e-5, 1.0, xhat.data(), rstd.data());
    CHECK(all_representable(Precision::F32, xhat));  // a fused norm's statistics: float32
    CHECK(all_representable(Precision::F32, rstd));
    Mat y(n, d);
    k->scale_columns(xhat.data(), gamma.data(), y.data(), n, d);
    CHECK(all_representable(p, y));
    Mat dx(n, d);
    k->norm_vjp(rows::kLayerNorm, xhat.data(), rstd.data(), gamma.data(), 1.0, n, d, x.data(), dx.data(), n);
    CHECK(all_representable(p, dx));
    Mat s = normal(n, n, 4);
    k->softmax_rows(s.data(), n, n, true);
    CHECK(all_representable(p, s));
    Mat dp = normal(n, n, 5);
    round_in_place(p, dp);
    k->softmax_vjp(s.data(), n, dp.data(), 1, 0.5);
    CHECK(all_representable(p, dp));
    Mat a(n, d), fp(n, d);
    k->activation(rows::kGelu, x.data(), x.size(), a.data(), fp.data());
    CHECK(all_representable(p, a));
    CHECK(all_representable(Precision::F32, fp));
    Mat z = x;
    k->axpby(z.size(), 0.3, w.topRows(n).data(), 1.0, z.data());
    CHECK(all_representable(p, z));
    k->multiply_tiled(z.data(), a.data(), n, d, n);
    CHECK(all_representable(p, z));
    k->add_row(z.data(), gamma.data(), n, d);
    CHECK(all_representable(p, z));
    Mat acc = Mat::Zero(1, d);
    k->add_column_sums(x.data(), n, d, acc.data());
    CHECK(all_representable(p, acc));
    CHECK(representable(p, k->dot(x.data(), z.data(), x.size())));
  }
}

TEST_CASE("precision kernels: float16 products are accumulated in float32 and rounded once", "[precision]") {
  const auto h = make_precision_kernels(Precision::F16, cpu_kernels());
  // one product 2^-13 · 2^-12 = 2^-25: half of float16's smallest subnormal, ties to 0
  CHECK(product(*h, Mat::Constant(1, 1, p2(-13)), Mat::Constant(1, 1, p2(-12)))(0, 0) == 0.0);
  // sixteen products 2^-14 · 2^-14 = 2^-28 each, exact in float32, sum 2^-24: kept (rounding each product first
  // would give 0)
  CHECK(product(*h, Mat::Constant(1, 16, p2(-14)), Mat::Constant(16, 1, p2(-14)))(0, 0) == p2(-24));
  // 256 · 256 = 65536 is past float16's 65504: Inf; 255 · 256 = 65280 is a float16 value
  CHECK(product(*h, Mat::Constant(1, 1, 256), Mat::Constant(1, 1, 256))(0, 0) == std::numeric_limits<double>::infinity());
  CHECK(product(*h, Mat::Constant(1, 1, 255), Mat::Constant(1, 1, 256))(0, 0) == 65280.0);
  // an operand that is not a float16 value is rounded first: 1 + 2^-12 is 1
  CHECK(product(*h, Mat::Constant(1, 1, 1 + p2(-12)), Mat::Constant(1, 1, 3))(0, 0) == 3.0);
  // the sum is float32's: 2048 + 1 is 2049 in float32, rounded once to float16 (11 bits): the tie goes to 2048
  Mat a(1, 2), b(2, 1);
  a << 2048, 1;
  b << 1, 1;
  CHECK(product(*h, a, b)(0, 0) == 2048.0);
  a << 2048, 3;  // 2051 → 2052
  CHECK(product(*h, a, b)(0, 0) == 2052.0);
}

TEST_CASE("precision kernels: bfloat16 products underflow where float32 does", "[precision]") {
  // bfloat16 has float32's exponent range, so a product of two of its values can fall below float32's smallest
  // subnormal 2^-149: the emulation (like float32 hardware) gives 0; 2^-70 · 2^-70 = 2^-140 is a float32 subnormal,
  // rounded to bfloat16's 2^-133 grid: 0 (below half of 2^-133)
  const auto b = make_precision_kernels(Precision::BF16, cpu_kernels());
  CHECK(product(*b, Mat::Constant(1, 1, p2(-100)), Mat::Constant(1, 1, p2(-100)))(0, 0) == 0.0);
  CHECK(product(*b, Mat::Constant(1, 1, p2(-70)), Mat::Constant(1, 1, p2(-70)))(0, 0) == 0.0);
  CHECK(product(*b, Mat::Constant(1, 1, p2(-66)), Mat::Constant(1, 1, p2(-66)))(0, 0) == p2(-132));
  // 8 significand bits: (1 + 2^-7)^2 = 1 + 2^-6 + 2^-14 exactly in float32, rounded to 1 + 2^-6
  CHECK(product(*b, Mat::Constant(1, 1, 1 + p2(-7)), Mat::Constant(1, 1, 1 + p2(-7)))(0, 0) == 1 + p2(-6));
}

TEST_CASE("precision kernels: a linear's bias joins its product before the one rounding", "[precision]") {
  // [1, 1]·[1, 2^-8]ᵀ = 1 + 2^-8, a tie on bfloat16's 2^-7 grid near 1; + b = 2^-10 puts the sum above it:
  // rounded once (PyTorch's addmm) 1 + 2^-7, rounded after the product and again after the bias 1
  const auto k = make_precision_kernels(Precision::BF16, cpu_kernels());
  Mat a(1, 2), w(1, 2), b = Mat::Constant(1, 1, p2(-10)), y(1, 1);
  a << 1, 1;
  w << 1, p2(-8);  // y = a·wᵀ + b, w as a linear layer holds it
  k->gemm_add_row(1, 1, 2, {a.data(), 2}, {w.data(), 2, 0, true}, b.data(), y.data());
  CHECK(y(0, 0) == 1 + p2(-7));
  k->gemm(1, 1, 2, 1.0, {a.data(), 2}, {w.data(), 2, 0, true}, 0.0, y.data(), 1, 0, 1);
  k->add_row(y.data(), b.data(), 1, 1);
  CHECK(y(0, 0) == 1.0);
  // the exact kernels: the two steps, bits as before
  cpu_kernels().gemm_add_row(1, 1, 2, {a.data(), 2}, {w.data(), 2, 0, true}, b.data(), y.data());
  CHECK(y(0, 0) == 1 + p2(-8) + p2(-10));
  // a bias that is not a value of the type is rounded first (autocast casts the float32 bias): 2^-10 + 2^-20 → 2^-10
  b(0, 0) = p2(-10) + p2(-20);
  k->gemm_add_row(1, 1, 2, {a.data(), 2}, {w.data(), 2, 0, true}, b.data(), y.data());
  CHECK(y(0, 0) == 1 + p2(-7));
}

TEST_CASE("precision kernels: autocast's two sets round products to the type, the rest to their own type",
          "[precision][autocast]") {
  const ModelKernels k = make_autocast_kernels(Precision::F16, cpu_kernels());
  // products: of the type in both sets (1 + 2^-12 is not a float16 value: the operand rounds to 1)
  for (const KernelOps* set : {k.branch.get(), k.main.get()})
    CHECK(product(*set, Mat::Constant(1, 1, 1 + p2(-12)), Mat::Constant(1, 1, 3))(0, 0) == 3.0);
  // element-wise: float32 in main (autocast's float32 set), float16 in branch (the low one)
  const double x = 1 + p2(-12);
  double y = 0;
  k.main->axpby(1, 1.0, &x, 0.0, &y);
  CHECK(y == x);
  k.branch->axpby(1, 1.0, &x, 0.0, &y);
  CHECK(y == 1.0);
  // softmax is on autocast's float32 list in both: probabilities 1/3 as float32, not float16
  Mat s = Mat::Zero(1, 3);
  k.branch->softmax_rows(s.data(), 1, 3, false);
  CHECK(s(0, 0) == static_cast<double>(1.0f / 3.0f));
  CHECK_FALSE(representable(Precision::F16, s(0, 0)));
}

TEST_CASE("precision kernels: f64 gives the reference kernels' bits", "[precision]") {
  const auto k = make_precision_kernels(Precision::F64, cpu_kernels());
  const Mat A = normal(37, 29, 6), B = normal(29, 41, 7);
  CHECK(product(*k, A, B) == product(cpu_kernels(), A, B));
  Mat x1 = normal(5, 7, 8), x2 = x1;
  k->activation(rows::kGelu, x1.data(), x1.size(), x1.data(), nullptr);
  cpu_kernels().activation(rows::kGelu, x2.data(), x2.size(), x2.data(), nullptr);
  CHECK(x1 == x2);
}

TEST_CASE("precision kernels: float32 products of float32 values", "[precision]") {
  // small integers multiply and add exactly in float32: the answer is exact whatever the order
  const auto f = make_precision_kernels(Precision::F32, cpu_kernels());
  Mat A(2, 3), B(3, 2);
  A << 1, 2, 3, 4, 5, 6;
  B << 7, 8, 9, 10, 11, 12;
  Mat want(2, 2);
  want << 58, 64, 139, 154;
  CHECK(product(*f, A, B) == want);
  // a double that is not a float32 value is rounded first: 1 + 2^-30 is 1
  CHECK(product(*f, Mat::Constant(1, 1, 1 + p2(-30)), Mat::Constant(1, 1, 1))(0, 0) == 1.0);
}
