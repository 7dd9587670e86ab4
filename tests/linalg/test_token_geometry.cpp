// test_token_geometry.cpp — the token-geometry and attention formulas (linalg/token_geometry.hpp) on hand-made
// inputs whose answers are known in closed form, and on random inputs against a plain loop over pairs.
#include <catch2/catch.hpp>

#include <cmath>

#include "gradflow/core/rng.hpp"
#include "gradflow/linalg/token_geometry.hpp"
#include "gradflow/model/init.hpp"
#include "tolerances.hpp"

using namespace gradflow;
using namespace gradflow::test;
using Catch::Matchers::WithinAbs;

TEST_CASE("token geometry: identical tokens are collapsed (cosine 1, distance 0, stable rank 1)", "[geometry]") {
  Mat X(5, 3);
  for (Index i = 0; i < 5; ++i) X.row(i) << 0.3, -1.7, 2.5;
  const TokenGeometry g = token_geometry(X);
  CHECK_THAT(g.mean_cosine, WithinAbs(1.0, kAlgebraTol));
  CHECK_THAT(g.rank_one_distance, WithinAbs(0.0, kAlgebraTol));
  CHECK_THAT(g.stable_rank, WithinAbs(1.0, kAlgebraTol));
}

TEST_CASE("token geometry: orthonormal tokens (cosine 0, distance sqrt(1 - 1/n), stable rank n)", "[geometry]") {
  const Index n = 4;
  const Mat X = 2.5 * Mat::Identity(n, 6);  // n orthogonal tokens of equal length, d > n
  const TokenGeometry g = token_geometry(X);
  CHECK_THAT(g.mean_cosine, WithinAbs(0.0, kAlgebraTol));
  CHECK_THAT(g.rank_one_distance, WithinAbs(std::sqrt(1.0 - 1.0 / n), kAlgebraTol));
  CHECK_THAT(g.stable_rank, WithinAbs(static_cast<double>(n), kAlgebraTol));
}

TEST_CASE("token geometry: opposite tokens (cosine -1, mean 0 so distance 1, stable rank 1)", "[geometry]") {
  Mat X(2, 3);
  X << 1.0, 2.0, -0.5, -1.0, -2.0, 0.5;
  const TokenGeometry g = token_geometry(X);
  CHECK_THAT(g.mean_cosine, WithinAbs(-1.0, kAlgebraTol));
  CHECK_THAT(g.rank_one_distance, WithinAbs(1.0, kAlgebraTol));
  CHECK_THAT(g.stable_rank, WithinAbs(1.0, kAlgebraTol));
}

TEST_CASE("token geometry: undefined cases are NaN (one token's cosine, a zero token, X = 0)", "[geometry]") {
  CHECK(std::isnan(token_geometry(Mat::Ones(1, 4)).mean_cosine));
  CHECK_THAT(token_geometry(Mat::Ones(1, 4)).rank_one_distance, WithinAbs(0.0, kAlgebraTol));
  Mat X = Mat::Ones(3, 4);
  X.row(1).setZero();
  CHECK(std::isnan(token_geometry(X).mean_cosine));
  const TokenGeometry z = token_geometry(Mat::Zero(3, 4));
  CHECK(std::isnan(z.rank_one_distance));
  CHECK(std::isnan(z.stable_rank));
}

TEST_CASE("token geometry: random tokens against a plain loop over pairs and the definitions", "[geometry]") {
  for (Index n : {2, 3, 7}) {
    const Mat X = random_normal(11, "geometry", n, 5);
    double cos = 0;
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < n; ++j)
        if (i != j) cos += X.row(i).dot(X.row(j)) / (X.row(i).norm() * X.row(j).norm());
    cos /= static_cast<double>(n * (n - 1));
    Mat centred = X;
    for (Index i = 0; i < n; ++i) centred.row(i) -= X.colwise().sum() / static_cast<double>(n);
    const Eigen::JacobiSVD<Mat> svd(X);
    const TokenGeometry g = token_geometry(X);
    INFO("n = " << n);
    CHECK_THAT(g.mean_cosine, WithinAbs(cos, kAlgebraTol));
    CHECK_THAT(g.rank_one_distance, WithinAbs(centred.norm() / X.norm(), kAlgebraTol));
    const double s = svd.singularValues()(0);
    CHECK_THAT(g.stable_rank, WithinAbs(X.squaredNorm() / (s * s), 10 * kAlgebraTol));
    CHECK(g.stable_rank >= 1.0 - kAlgebraTol);
    CHECK(g.stable_rank <= static_cast<double>(std::min<Index>(n, 5)) + kAlgebraTol);
  }
}

TEST_CASE("attention stats: uniform attention has the maximal entropy", "[geometry]") {
  const Index n = 6;
  const AttentionStats s = attention_stats(Mat::Constant(n, n, 1.0 / n), false);
  CHECK_THAT(s.entropy, WithinAbs(std::log(6.0), kAlgebraTol));
  CHECK_THAT(s.max_entropy, WithinAbs(std::log(6.0), kAlgebraTol));
  CHECK_THAT(s.self_attention, WithinAbs(1.0 / n, kAlgebraTol));
  // causal: query i spreads 1/(i+1) over keys 0..i; the maximum is the mean of ln(i+1)
  Mat P = Mat::Zero(n, n);
  double hmax = 0, self = 0;
  for (Index i = 0; i < n; ++i) {
    P.row(i).head(i + 1).setConstant(1.0 / static_cast<double>(i + 1));
    hmax += std::log(static_cast<double>(i + 1)) / n;
    self += 1.0 / static_cast<double>(i + 1) / n;
  }
  const AttentionStats c = attention_stats(P, true);
  CHECK_THAT(c.entropy, WithinAbs(hmax, kAlgebraTol));
  CHECK_THAT(c.max_entropy, WithinAbs(hmax, kAlgebraTol));
  CHECK_THAT(c.self_attention, WithinAbs(self, kAlgebraTol));
}

TEST_CASE("attention stats: one-hot attention has zero entropy", "[geometry]") {
  const Index n = 5;
  const AttentionStats id = attention_stats(Mat::Identity(n, n), false);
  CHECK(id.entropy == 0.0);
  CHECK(id.self_attention == 1.0);
  Mat first = Mat::Zero(n, n);
  first.col(0).setOnes();  // every query attends to token 0 (allowed under the causal mask too)
  const AttentionStats f = attention_stats(first, true);
  CHECK(f.entropy == 0.0);
  CHECK_THAT(f.self_attention, WithinAbs(1.0 / n, kAlgebraTol));
  // a two-way split: entropy ln 2 for every query
  Mat half = Mat::Zero(n, n);
  half.col(0).setConstant(0.5);
  half.col(1).setConstant(0.5);
  CHECK_THAT(attention_stats(half, false).entropy, WithinAbs(std::log(2.0), kAlgebraTol));
}
