// test_cpu_kernels.cpp — the host kernels' GEMM (kernels/cpu_kernels.cpp): a product into a fresh C (β = 0) is one
// dgemm_ call with β = 0 where Eigen would call dgemm_, and must give exactly the bits of Eigen's own
// `C.setZero(); C.noalias() += α·op(A)·op(B)` (what the kernel did before, and still does for β ≠ 0) on every shape
// class: Eigen's coefficient-based small products and matrix-vector products, both sides of its threshold, every
// transpose, padded leading dimensions, batches, and products large enough for gradflow's dgemm_ to split them. And
// the row-wise passes, which split their rows between threads, give the bits of one thread.
#include <catch2/catch.hpp>

#include <omp.h>

#include <Eigen/Core>
#include <vector>

#include "gradflow/core/rng.hpp"
#include "gradflow/kernels/cpu_kernels.hpp"
#include "gradflow/kernels/row_math.hpp"

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

TEST_CASE("cpu: a beta = 0 product gives the bits of Eigen's setZero and +=, on every shape class",
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

namespace {

// Runs f with OpenMP's thread count set to `threads`, then restores it
template <class F>
void with_threads(int threads, F f) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  f();
  omp_set_num_threads(before);
}

}  // namespace

TEST_CASE("cpu: the row-wise passes split between threads give the bits of one thread", "[kernels][threads]") {
  const KernelOps& k = cpu_kernels();
  const Index n = 37, d = 53, copies = 40, rows = n * copies;  // rows·d = 78440: above the split's threshold
  Mat xhat(n, d), gamma(1, d), dy(rows, d), f(n, d), x(rows, d), s(1, d);
  Rng rng(3, "cpu-kernels-threads");
  for (Mat* m : {&xhat, &gamma, &dy, &f, &x, &s}) rng.fill_normal(*m, 1.0);
  Vec rstd = Vec::LinSpaced(n, 0.5, 2.0);
  const auto passes = [&] {
    std::vector<Mat> out;
    for (const int kind : {rows::kLayerNorm, rows::kRMSNorm, rows::kDyT}) {
      Mat v(rows, d), j(rows, d);
      k.norm_vjp(kind, xhat.data(), rstd.data(), gamma.data(), 0.7, n, d, dy.data(), v.data(), rows);
      k.norm_jvp(kind, xhat.data(), rstd.data(), gamma.data(), 0.7, n, d, dy.data(), j.data(), rows);
      out.push_back(v);
      out.push_back(j);
    }
    Mat t = dy;
    k.multiply_tiled(t.data(), f.data(), n, d, rows);
    Mat a = x, b(rows, d), c(rows, d);
    k.axpby(a.size(), -1.25, dy.data(), 0.5, a.data());
    k.axpby(b.size(), 3.0, dy.data(), 0.0, b.data());
    k.scale_columns(x.data(), s.data(), c.data(), rows, d);
    out.insert(out.end(), {t, a, b, c});
    return out;
  };
  std::vector<Mat> one, several;
  with_threads(1, [&] { one = passes(); });
  with_threads(3, [&] { several = passes(); });
  REQUIRE(one.size() == several.size());
  for (size_t i = 0; i < one.size(); ++i) {
    CAPTURE(i);
    REQUIRE(one[i] == several[i]);
  }
}
