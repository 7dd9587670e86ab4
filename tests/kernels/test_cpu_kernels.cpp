// test_cpu_kernels.cpp — the host kernels' GEMM (kernels/cpu_kernels.cpp): a product into a fresh C (β = 0) is one
// dgemm_ call with β = 0 where Eigen would call dgemm_, and must give exactly the bits of Eigen's own
// `C.setZero(); C.noalias() += α·op(A)·op(B)` (what the kernel did before, and still does for β ≠ 0) on every shape
// class: Eigen's coefficient-based small products and matrix-vector products, both sides of its threshold, every
// transpose, padded leading dimensions, batches, and products large enough for gradflow's dgemm_ to split them.
#include <catch2/catch.hpp>

#include <Eigen/Core>
#include <vector>

#include "gradflow/core/rng.hpp"
#include "gradflow/kernels/cpu_kernels.hpp"

using namespace gradflow;

namespace {

using ConstStrided = Eigen::Map<const Mat, 0, Eigen::OuterStride<>>;
using Strided = Eigen::Map<Mat, 0, Eigen::OuterStride<>>;

struct Shape {
  Index m, n, k;
};

// A buffer of `rows` rows of `ld` doubles (ld ≥ the columns used), normal entries
std::vector<double> buffer(Index rows, Index ld, Index batch, uint64_t seed) {
  Mat v(rows * batch, ld);
  Rng(seed, "cpu-kernels-gemm").fill_normal(v, 1.0);
  return {v.data(), v.data() + v.size()};
}

}  // namespace

TEST_CASE("kernels/cpu: a beta = 0 product gives the bits of Eigen's setZero and +=, on every shape class",
          "[kernels][gemm]") {
  const KernelOps& k = cpu_kernels();
  const std::vector<Shape> shapes = {
      {3, 4, 5},      // coefficient-based in Eigen (3 + 4 + 5 < 20)
      {6, 6, 7},      // 19: still coefficient-based
      {6, 7, 7},      // 20: the first BLAS size
      {1, 40, 30},    // a row vector times a matrix: gemv
      {40, 1, 30},    // a matrix times a vector: gemv
      {33, 70, 129},  // odd sizes, one block
      {150, 300, 200} // large enough for gradflow's dgemm_ to split C between threads
  };
  const Index batch = 2, pad = 3;
  for (const Shape& s : shapes)
    for (const bool ta : {false, true})
      for (const bool tb : {false, true})
        for (const double alpha : {1.0, -0.375}) {
          CAPTURE(s.m, s.n, s.k, ta, tb, alpha);
          // stored shapes (row-major): A is (m, k) or, transposed, (k, m); B is (k, n) or (n, k)
          const Index a_rows = ta ? s.k : s.m, a_cols = ta ? s.m : s.k;
          const Index b_rows = tb ? s.n : s.k, b_cols = tb ? s.k : s.n;
          const Index lda = a_cols + pad, ldb = b_cols + pad, ldc = s.n + pad;
          const std::vector<double> A = buffer(a_rows, lda, batch, 1), B = buffer(b_rows, ldb, batch, 2);
          const Index a_stride = a_rows * lda, b_stride = b_rows * ldb, c_stride = s.m * ldc;
          std::vector<double> C(static_cast<size_t>(batch * c_stride), 7.0), R = C;  // stale values in C: overwritten
          k.gemm(s.m, s.n, s.k, alpha, {A.data(), lda, a_stride, ta}, {B.data(), ldb, b_stride, tb}, 0.0, C.data(), ldc,
                 c_stride, batch);
          for (Index b = 0; b < batch; ++b) {
            const ConstStrided a(A.data() + b * a_stride, a_rows, a_cols, Eigen::OuterStride<>(lda));
            const ConstStrided bb(B.data() + b * b_stride, b_rows, b_cols, Eigen::OuterStride<>(ldb));
            Strided r(R.data() + b * c_stride, s.m, s.n, Eigen::OuterStride<>(ldc));
            r.setZero();
            if (ta && tb) r.noalias() += alpha * a.transpose() * bb.transpose();
            else if (ta) r.noalias() += alpha * a.transpose() * bb;
            else if (tb) r.noalias() += alpha * a * bb.transpose();
            else r.noalias() += alpha * a * bb;
          }
          REQUIRE(C == R);  // bit for bit, the padding columns (left at 7) included
        }
}
