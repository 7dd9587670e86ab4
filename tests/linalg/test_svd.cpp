// test_svd.cpp — the two singular-value routes of src/linalg/svd.cpp: dgesdd and the two-stage band route
// (singular_values_banded, taken from kBandedSvdMin on). Both against matrices of known singular values
// (U·diag(s)·Vᵀ with random orthogonal U, V; exact zeros and values down to 1e-12·σ_max) and against each other.
#include <catch2/catch.hpp>

#include <Eigen/QR>
#include <cmath>
#include <utility>

#include "gradflow/core/error.hpp"
#include "gradflow/core/rng.hpp"
#include "gradflow/linalg/svd.hpp"
#include "tolerances.hpp"

using namespace gradflow;

#ifdef GRADFLOW_HAVE_LAPACK
namespace {

Mat random_orthogonal(Index n, Rng& rng) {
  Mat G(n, n);
  rng.fill_normal(G, 1.0);
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(G);
  return qr.householderQ() * Eigen::MatrixXd::Identity(n, n);
}

// (r, c) with singular values s (descending, min(r, c) of them).
Mat with_singular_values(Index r, Index c, const Vec& s, Rng& rng) {
  const Mat U = random_orthogonal(r, rng), V = random_orthogonal(c, rng);
  Mat S = Mat::Zero(r, c);
  for (Index i = 0; i < s.size(); ++i) S(i, i) = s(i);
  return U * S * V.transpose();
}

// descending values from 1 down to 1e-12, with `zeros` exact zeros at the end
Vec graded(Index k, Index zeros) {
  Vec s(k);
  for (Index i = 0; i < k; ++i) s(i) = i < k - zeros ? std::pow(10.0, -12.0 * static_cast<double>(i) / static_cast<double>(k)) : 0.0;
  return s;
}

double max_abs_diff(const Vec& a, const Vec& b) { return (a - b).cwiseAbs().maxCoeff(); }

}  // namespace

TEST_CASE("svd: both routes give known singular values to kSvdTol*sigma_max, any shape and band", "[linalg]") {
  Rng rng(11, "svd routes");
  for (const auto& [r, c] : {std::pair<Index, Index>{64, 64}, {90, 50}, {50, 90}, {33, 33}, {10, 10}, {1, 7}, {7, 1}}) {
    const Index k = std::min(r, c);
    const Vec s = graded(k, k / 8);
    const Mat A = with_singular_values(r, c, s, rng);
    INFO("shape (" << r << ", " << c << ")");
    CHECK(max_abs_diff(singular_values_dgesdd(A), s) <= test::kSvdTol * s(0));
    for (Index band : {1, 3, 8, 24, 200}) {
      INFO("band " << band);
      const Vec got = singular_values_banded(A, band);
      REQUIRE(got.size() == k);
      CHECK(max_abs_diff(got, s) <= test::kSvdTol * s(0));
      for (Index i = 1; i < k; ++i) CHECK(got(i) <= got(i - 1));
    }
  }
}

TEST_CASE("svd: from kBandedSvdMin on singular_values takes the band route, agreeing with dgesdd and the truth", "[linalg]") {
  Rng rng(12, "svd large");
  const Index n = kBandedSvdMin + 8;
  const Vec s = graded(n, 16);
  const Mat A = with_singular_values(n, n, s, rng);
  const Vec got = singular_values(A), ref = singular_values_dgesdd(A);
  CHECK(got == singular_values_banded(A));  // the route taken
  CHECK(max_abs_diff(got, s) <= test::kSvdTol * s(0));
  CHECK(max_abs_diff(got, ref) <= test::kSvdTol * s(0));
  // the numerical rank and sigma_min the reports take (values 5 % apart, none within rounding of kRankRtol)
  const SpectrumSummary a = summarize_spectrum(got, 0), b = summarize_spectrum(ref, 0), truth = summarize_spectrum(s, 0);
  CHECK(truth.numerical_rank < n - 16);  // the graded values below 1e-10 and the exact zeros count as zero
  CHECK(a.numerical_rank == truth.numerical_rank);
  CHECK(b.numerical_rank == truth.numerical_rank);
  CHECK(std::abs(a.min_singular_value - truth.min_singular_value) <= test::kSvdTol * s(0));
  Mat copy = A;
  CHECK(singular_values(std::move(copy)) == got);  // the in-place overload: the same values
}

TEST_CASE("svd: the band route is scale-equivariant (within kSvdTol) from 2^-1000 to 2^1000, zero gives zeros", "[linalg]") {
  Rng rng(13, "svd scale");
  const Vec s = graded(40, 4);
  const Mat A = with_singular_values(40, 40, s, rng);
  const Vec ref = singular_values_banded(A, 8);
  for (int k : {-1000, -400, 400, 1000}) {
    INFO("scaled by 2^" << k);
    const Vec got = singular_values_banded(A.unaryExpr([k](double v) { return std::ldexp(v, k); }), 8);
    CHECK(max_abs_diff(got.unaryExpr([k](double v) { return std::ldexp(v, -k); }), ref) <= test::kSvdTol * s(0));
  }
  CHECK(singular_values_banded(Mat::Zero(30, 20), 8) == Vec::Zero(20));
  Mat bad = A;
  bad(2, 3) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(singular_values_banded(bad, 8), Error);
}
#endif
