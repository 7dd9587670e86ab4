// test_blas_threads.cpp — BLAS and LAPACK results do not depend on the thread count (src/linalg/blas_threads.cpp).
// Without that file, OpenBLAS 0.3.21 gives other last bits for most of these shapes at 2 or 3 threads (measured
// 2026-12-02: a product with m = 333 already differs at 2 threads, the power-of-two ones at 3).
#include <catch2/catch.hpp>

#include <omp.h>

#include <functional>
#include <string>
#include <vector>

#include "gradflow/core/rng.hpp"
#include "gradflow/linalg/svd.hpp"
#include "linalg/blas_threads.hpp"

using namespace gradflow;

namespace {

Mat normal(Index rows, Index cols, uint64_t seed) {
  Mat A(rows, cols);
  Rng(seed, "blas-threads").fill_normal(A, 1.0);
  return A;
}

// f() on 1 thread, then on 2 to 5: the same bits each time
void require_thread_independent(const std::string& what, const std::function<Mat()>& f) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const Mat one = f();
  for (int threads = 2; threads <= 5; ++threads) {
    omp_set_num_threads(threads);
    const Mat got = f();
    INFO(what << " on " << threads << " threads, largest difference " << (got - one).cwiseAbs().maxCoeff());
    CHECK(got == one);
  }
  omp_set_num_threads(saved);
}

}  // namespace

TEST_CASE("blas threads: products give the 1-thread bits on 2 to 5 threads", "[linalg][quick]") {
  struct Shape { Index m, k, n; };
  for (const Shape s : {Shape{333, 77, 1000}, Shape{100, 512, 96}, Shape{128, 512, 2048}, Shape{2048, 128, 512},
                        Shape{1000, 333, 250}, Shape{512, 512, 512}}) {
    const Mat A = normal(s.m, s.k, 1), B = normal(s.k, s.n, 2), At = A.transpose(), Bt = B.transpose();
    const std::string shape = std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n);
    Mat C0 = normal(s.m, s.n, 3);
    require_thread_independent("A B " + shape, [&] { return Mat(A * B); });
    require_thread_independent("At' Bt' " + shape, [&] { return Mat(At.transpose() * Bt.transpose()); });
    require_thread_independent("A Bt' " + shape, [&] { return Mat(A * Bt.transpose()); });
    require_thread_independent("C += 0.5 At' B " + shape, [&] {
      Mat C = C0;
      C.noalias() += 0.5 * (At.transpose() * B);
      return C;
    });
  }
}

TEST_CASE("blas threads: products inside a worker with a nested team of its own give the 1-thread bits",
          "[linalg][quick]") {
  // as in the experiment runner (src/experiments/runner.cpp): two workers side by side, one level of nesting
  // allowed, each worker's products split over its own team of 2 or 3 threads
  const Mat A = normal(333, 512, 4), B = normal(512, 1000, 5), At = A.transpose();
  const int saved = omp_get_max_threads(), levels = omp_get_max_active_levels();
  omp_set_num_threads(1);
  const Mat ab = A * B, atb = At.transpose() * B;
  omp_set_max_active_levels(2);
  std::vector<Mat> got(2);
#pragma omp parallel num_threads(2)
  {
    const int w = omp_get_thread_num();
    omp_set_num_threads(2 + w);
    got[static_cast<size_t>(w)] = w == 0 ? Mat(A * B) : Mat(At.transpose() * B);
  }
  omp_set_max_active_levels(levels);
  omp_set_num_threads(saved);
  CHECK(got[0] == ab);
  CHECK(got[1] == atb);
}

TEST_CASE("blas threads: matrix-vector products on any thread count", "[linalg][quick]") {
  const Mat A = normal(20000, 48, 4);
  const Vec x = normal(48, 1, 5), z = normal(20000, 1, 6);
  require_thread_independent("A x (tall)", [&] { return Mat(A * x); });
  require_thread_independent("A' z (tall, transposed: sums of 20000)", [&] { return Mat(A.transpose() * z); });
}

TEST_CASE("blas threads: singular values (LAPACK's inner products) on any thread count", "[linalg][quick]") {
  const Mat A = normal(600, 600, 7), B = normal(300, 200, 8);  // the band route, and dgesdd
  require_thread_independent("singular values 600 x 600", [&] { return Mat(singular_values(A)); });
  require_thread_independent("singular values 300 x 200", [&] { return Mat(singular_values(B)); });
}

TEST_CASE("blas threads: how a product is cut", "[linalg][quick]") {
  const auto covered = [](const GemmSplit& s, long len) {
    REQUIRE(s.width % kTileAlign == 0);
    REQUIRE((s.blocks - 1) * s.width < len);
    REQUIRE(s.blocks * s.width >= len);
  };
  // the longer dimension, one block per thread, edges on multiples of kTileAlign
  GemmSplit s = gemm_split(2048, 128, 512, 2);
  CHECK(!s.by_columns);
  CHECK(s.blocks == 2);
  covered(s, 2048);
  s = gemm_split(333, 1000, 77, 3);
  CHECK(s.by_columns);
  CHECK(s.blocks == 3);
  covered(s, 1000);
  s = gemm_split(128, 150, 512, 16);  // 150 columns: at most 3 blocks of 64
  CHECK(s.blocks == 3);
  covered(s, 150);
  // too little work for two blocks of at least kMinBlockWork: the whole product on one thread
  CHECK(gemm_split(64, 64, 64, 8).blocks == 1);
  CHECK(gemm_split(60, 50, 2048, 4).blocks == 1);  // shorter than one tile
}

TEST_CASE("blas threads: float32 products (an emulated precision's) give the 1-thread bits on 2 to 5 threads",
          "[linalg][quick]") {
  using MatF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  for (const Index m : {Index{333}, Index{512}}) {
    const MatF A = normal(m, 300, 6).cast<float>(), B = normal(300, 1000, 7).cast<float>();
    require_thread_independent("float32 A B, m = " + std::to_string(m),
                               [&] { return Mat(MatF(A * B).cast<double>()); });
    require_thread_independent("float32 A' Bt', m = " + std::to_string(m), [&] {
      const MatF At = A.transpose();
      return Mat(MatF(0.5f * At.transpose() * B).cast<double>());
    });
  }
}
