// test_top_singular.cpp — spectral_norm (src/linalg/top_singular.cpp) at extreme scales: Lanczos on AᵀA
// under- or overflows for max|A| far from 1 (Spectra's tridiagonal eigensolver failed on a LayerNorm Jacobian at
// an input of 1e300, issue 13 item 5); the norm of A·2^k must be the norm of A times 2^k.
#include <catch2/catch.hpp>

#include <omp.h>

#include <cmath>

#include "gradflow/core/error.hpp"
#include "gradflow/core/rng.hpp"
#include "gradflow/linalg/svd.hpp"
#include "gradflow/linalg/top_singular.hpp"
#include "tolerances.hpp"

using namespace gradflow;

TEST_CASE("spectral_norm: scale-equivariant from 2^-1000 to 2^1000, equal to the SVD's", "[linalg]") {
  Mat A(40, 40);
  Rng(5, "spectral").fill_normal(A, 1.0);
  const double ref = singular_values(A)(0);
  REQUIRE(std::abs(spectral_norm(A) - ref) <= test::kLanczosTol * ref);
  for (int k : {-1000, -700, -400, 400, 700, 1000}) {
    INFO("scaled by 2^" << k);
    const Mat S = A.unaryExpr([k](double v) { return std::ldexp(v, k); });
    const double got = spectral_norm(S);
    REQUIRE(std::isfinite(got));
    CHECK(std::abs(std::ldexp(got, -k) - ref) <= test::kLanczosTol * ref);
  }
}

TEST_CASE("spectral_norm: a matrix holding NaN/Inf is refused, not handed to the solver", "[linalg]") {
  Mat A = Mat::Identity(30, 30);
  A(3, 4) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(spectral_norm(A), Error);
}

TEST_CASE("spectral_norm: wide, tall and low-rank matrices equal the SVD's", "[linalg]") {
  // a single row of >= 6 columns gave 60.0 for sigma = 1.64 (Lanczos on a rank-one 6x6 AtA; found by the backend tests)
  Rng rng(7, "spectral shapes");
  for (const auto& [r, c] : {std::pair<Index, Index>{1, 6}, {1, 9}, {1, 64}, {2, 25}, {3, 40}, {40, 3}, {6, 1}, {64, 1}}) {
    INFO("shape (" << r << ", " << c << ")");
    Mat A(r, c);
    rng.fill_normal(A, 1.0);
    const double ref = singular_values(A)(0);
    CHECK(std::abs(spectral_norm(A) - ref) <= test::kLanczosTol * ref);
  }
  for (const Index rank : {1, 2, 5}) {
    INFO("40 x 40 of rank " << rank);
    Mat U(40, rank), V(rank, 40);
    rng.fill_normal(U, 1.0);
    rng.fill_normal(V, 1.0);
    const Mat A = U * V;
    const double ref = singular_values(A)(0);
    CHECK(std::abs(spectral_norm(A) - ref) <= test::kLanczosTol * ref);
  }
}

TEST_CASE("top_singular_values: the same bits on 1 and 2 threads (Spectra's vector algebra on one thread)", "[linalg]") {
  // An operator that does not depend on the thread count and costs O(N) (a diagonal: σ = |d_i|, the top two set
  // apart so that Lanczos converges in a few restarts), at N = 4096: OpenBLAS splits the sums of Spectra's tall gemv
  // with its (N, ncv) Krylov basis between two threads, which moved σ's last bits.
  const Index N = 4096;
  Vec d(N);
  Rng(9, "threads").fill_uniform(d, 0.0, 1.0);
  d(7) = 3.0;
  d(1000) = -2.0;
  const LinearMap apply = [&](const double* x, double* y) {
    for (Index i = 0; i < N; ++i) y[i] = d(i) * x[i];
  };
  const int threads = omp_get_max_threads();
  Vec by_threads[2];
  for (int t : {1, 2}) {
    omp_set_num_threads(t);
    const TopSingular r = top_singular_values(apply, apply, N, N, 2, 1e-12, 1000);
    REQUIRE(r.converged);
    REQUIRE(omp_get_max_threads() == t);  // the caller's thread count is restored
    by_threads[t - 1] = r.values;
  }
  omp_set_num_threads(threads);
  REQUIRE(by_threads[0].size() == 2);
  REQUIRE(std::abs(by_threads[0](0) - 3.0) <= test::kLanczosTol * 3.0);
  REQUIRE(std::abs(by_threads[0](1) - 2.0) <= test::kLanczosTol * 2.0);
  CHECK(by_threads[0](0) == by_threads[1](0));  // bit for bit, not to a tolerance
  CHECK(by_threads[0](1) == by_threads[1](1));
}
