// test_jacobian.cpp — the structured Jacobian algebra (include/gradflow/core/jacobian.hpp) against the same
// operations on plain dense Eigen matrices: the layout of to_dense, every structure combination of add and of
// the product, scale/add_diagonal/add_identity, which structure each result keeps, the shape checks, and
// results independent of the OpenMP thread count. Entry-wise operations must agree exactly; products only up
// to summation order (kAlgebraTol).
#include <catch2/catch.hpp>

#include <omp.h>

#include <string>
#include <vector>

#include "derivative_checks.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/core/jacobian.hpp"

using namespace gradflow;
using namespace gradflow::test;

namespace {

std::vector<Mat> random_blocks(Index n, Index rows, Index cols, uint64_t seed) {
  std::vector<Mat> b;
  for (Index i = 0; i < n; ++i) b.push_back(random_mat(rows, cols, seed + static_cast<uint64_t>(i)));
  return b;
}

// The block-diagonal matrix of `blocks`, built entry by entry from the row-major flattening of types.hpp:
// J[i*d_out + a, j*d_in + b] = (i == j) ? blocks[i](a, b) : 0.
Mat block_diagonal(const std::vector<Mat>& blocks) {
  const Index n = static_cast<Index>(blocks.size()), ro = blocks[0].rows(), co = blocks[0].cols();
  Mat m(n * ro, n * co);
  for (Index i = 0; i < n; ++i)
    for (Index a = 0; a < ro; ++a)
      for (Index j = 0; j < n; ++j)
        for (Index b = 0; b < co; ++b) m(i * ro + a, j * co + b) = i == j ? blocks[static_cast<size_t>(i)](a, b) : 0.0;
  return m;
}

// I_n ⊗ diag(a)
Mat kron_identity_diag(Index n, const RowVec& a) {
  const Index d = a.size();
  Mat m = Mat::Zero(n * d, n * d);
  for (Index k = 0; k < n * d; ++k) m(k, k) = a(k % d);
  return m;
}

// A Jacobian of either structure for (n tokens, d_in) -> (n tokens, d_out), with its dense matrix.
struct Case {
  Jacobian j;
  Mat dense;
};

Case make(bool tokenwise, Index n, Index d_out, Index d_in, uint64_t seed) {
  if (tokenwise) {
    auto blocks = random_blocks(n, d_out, d_in, seed);
    Mat m = block_diagonal(blocks);
    return {Jacobian::tokenwise(std::move(blocks)), m};
  }
  Mat m = random_mat(n * d_out, n * d_in, seed);
  return {Jacobian::dense(m, n), m};
}

std::string structure(bool tokenwise) { return tokenwise ? "tokenwise" : "dense"; }

}  // namespace

TEST_CASE("identity: tokenwise, square, exactly I", "[core][jacobian]") {
  const Jacobian I = Jacobian::identity(3, 4);
  REQUIRE(I.is_tokenwise());
  REQUIRE(I.tokens() == 3);
  REQUIRE(I.rows() == 12);
  REQUIRE(I.cols() == 12);
  REQUIRE(I.d_out() == 4);
  REQUIRE(I.d_in() == 4);
  REQUIRE(I.blocks().size() == 3);
  REQUIRE(I.to_dense() == Mat::Identity(12, 12));
}

TEST_CASE("tokenwise: shapes and the row-major block-diagonal layout of to_dense", "[core][jacobian]") {
  const auto blocks = random_blocks(3, 5, 2, 100);  // (d_out, d_in) = (5, 2): rectangular, so a swapped index shows
  const Jacobian J = Jacobian::tokenwise(blocks);
  REQUIRE(J.is_tokenwise());
  REQUIRE(J.tokens() == 3);
  REQUIRE(J.rows() == 15);
  REQUIRE(J.cols() == 6);
  REQUIRE(J.d_out() == 5);
  REQUIRE(J.d_in() == 2);
  REQUIRE(J.blocks().size() == 3);
  const Mat D = J.to_dense();
  REQUIRE(D == block_diagonal(blocks));
  // spot checks written out: token 1, feature (3, 1) sits at row 1*5 + 3, column 1*2 + 1; off-diagonal blocks are 0
  REQUIRE(D(8, 3) == blocks[1](3, 1));
  REQUIRE(D(0, 2) == 0.0);
  REQUIRE(D(14, 0) == 0.0);
  REQUIRE(Jacobian::tokenwise({}).rows() == 0);  // no tokens: an empty map, not a crash
  REQUIRE(Jacobian::tokenwise({}).cols() == 0);
}

TEST_CASE("dense: keeps its matrix, and to_dense of an rvalue hands it over", "[core][jacobian]") {
  const Mat m = random_mat(8, 12, 110);  // 4 tokens, d_out 2, d_in 3
  Jacobian J = Jacobian::dense(m, 4);
  REQUIRE_FALSE(J.is_tokenwise());
  REQUIRE(J.tokens() == 4);
  REQUIRE(J.rows() == 8);
  REQUIRE(J.cols() == 12);
  REQUIRE(J.d_out() == 2);
  REQUIRE(J.d_in() == 3);
  REQUIRE(J.matrix() == m);
  REQUIRE(J.to_dense() == m);
  const Mat moved = std::move(J).to_dense();
  REQUIRE(moved == m);
  Jacobian T = Jacobian::tokenwise(random_blocks(2, 3, 3, 120));
  const Mat expect = T.to_dense();
  REQUIRE(std::move(T).to_dense() == expect);  // the tokenwise rvalue path builds the same matrix
}

TEST_CASE("scale, add_diagonal, add_identity equal the dense operations exactly, keeping the structure", "[core][jacobian]") {
  for (bool tw : {true, false}) {
    INFO(structure(tw));
    const Index n = 3, d = 4;
    Case c = make(tw, n, d, d, 200);
    const RowVec a = random_mat(1, d, 210);
    SECTION("scale") {
      c.j.scale(-0.37);
      REQUIRE(c.j.is_tokenwise() == tw);
      REQUIRE(c.j.to_dense() == Mat(-0.37 * c.dense));
      c.j.scale(1.0);
      REQUIRE(c.j.to_dense() == Mat(-0.37 * c.dense));
    }
    SECTION("add_diagonal") {
      c.j.add_diagonal(a);
      REQUIRE(c.j.is_tokenwise() == tw);
      REQUIRE(c.j.to_dense() == Mat(c.dense + kron_identity_diag(n, a)));
    }
    SECTION("add_identity") {
      c.j.add_identity(2.5);
      REQUIRE(c.j.is_tokenwise() == tw);
      REQUIRE(c.j.to_dense() == Mat(c.dense + 2.5 * Mat::Identity(n * d, n * d)));
    }
    SECTION("add_diagonal refuses a non-square Jacobian or a diagonal of the wrong length") {
      Case r = make(tw, n, 2, d, 220);
      REQUIRE_THROWS_AS(r.j.add_diagonal(RowVec::Ones(d)), Error);
      REQUIRE_THROWS_AS(c.j.add_diagonal(RowVec::Ones(d + 1)), Error);
      try {
        r.j.add_identity(1.0);
        FAIL("no error");
      } catch (const Error& e) {
        REQUIRE(e.kind() == ErrorKind::Internal);
      }
    }
  }
}

TEST_CASE("add: every structure pair equals the dense sum exactly, tokenwise only when both are", "[core][jacobian]") {
  const Index n = 3, d_out = 2, d_in = 5;
  for (bool ta : {true, false})
    for (bool tb : {true, false}) {
      INFO(structure(ta) << " + " << structure(tb));
      Case a = make(ta, n, d_out, d_in, 300), b = make(tb, n, d_out, d_in, 310);
      a.j.add(b.j);
      REQUIRE(a.j.is_tokenwise() == (ta && tb));
      REQUIRE(a.j.tokens() == n);
      REQUIRE(a.j.rows() == n * d_out);
      REQUIRE(a.j.cols() == n * d_in);
      REQUIRE(a.j.to_dense() == Mat(a.dense + b.dense));
      REQUIRE(b.j.to_dense() == b.dense);  // the other operand is untouched
    }
  Jacobian a = make(true, n, d_out, d_in, 320).j;
  REQUIRE_THROWS_AS(a.add(make(true, n, d_in, d_out, 330).j), Error);
  REQUIRE_THROWS_AS(a.add(make(false, n, d_out, d_out, 340).j), Error);
}

TEST_CASE("product: every structure pair equals the dense product, tokenwise only when both are", "[core][jacobian]") {
  // (n, d0) -> (n, d1) -> (n, d2) with three different widths, so a transposed block or a wrong stride shows.
  const Index n = 4, d0 = 3, d1 = 5, d2 = 2;
  for (bool ta : {true, false})
    for (bool tb : {true, false}) {
      INFO(structure(ta) << " * " << structure(tb));
      const Case a = make(ta, n, d2, d1, 400), b = make(tb, n, d1, d0, 410);
      const Jacobian p = a.j * b.j;
      const Mat expect = a.dense * b.dense;
      REQUIRE(p.is_tokenwise() == (ta && tb));
      REQUIRE(p.tokens() == n);
      REQUIRE(p.rows() == n * d2);
      REQUIRE(p.cols() == n * d0);
      const double e = rel_err(p.to_dense(), expect);
      INFO("relative error " << e);
      REQUIRE(e <= kAlgebraTol);
      if (ta && tb) REQUIRE(p.to_dense() == block_diagonal(p.blocks()));  // off-diagonal blocks stay exactly 0
    }
}

TEST_CASE("product: a chain of mixed factors equals the dense chain, either way round", "[core][jacobian]") {
  // P = B3·B2·B1·B0 as the analysis forms P_l = P_{l+1}·B_l: a dense attention-like factor between tokenwise ones.
  const Index n = 3, d = 4;
  std::vector<Case> f;
  f.push_back(make(true, n, d, d, 500));
  f.push_back(make(false, n, d, d, 510));
  f.push_back(make(true, n, d, d, 520));
  f.push_back(make(true, n, d, d, 530));
  Jacobian top_down = f[3].j;
  for (int l = 2; l >= 0; --l) top_down = top_down * f[static_cast<size_t>(l)].j;
  Jacobian bottom_up = f[0].j;
  for (size_t l = 1; l < f.size(); ++l) bottom_up = f[l].j * bottom_up;
  const Mat expect = f[3].dense * f[2].dense * f[1].dense * f[0].dense;
  REQUIRE_FALSE(top_down.is_tokenwise());
  REQUIRE(rel_err(top_down.to_dense(), expect) <= kAlgebraTol);
  REQUIRE(rel_err(bottom_up.to_dense(), expect) <= kAlgebraTol);
  // the tokenwise factors alone stay tokenwise
  const Jacobian tw = f[3].j * f[2].j * f[0].j;
  REQUIRE(tw.is_tokenwise());
  REQUIRE(rel_err(tw.to_dense(), f[3].dense * f[2].dense * f[0].dense) <= kAlgebraTol);
  // the identity is neutral, exactly, on either side
  const Jacobian I = Jacobian::identity(n, d);
  REQUIRE((I * f[1].j).to_dense() == f[1].dense);
  REQUIRE((f[1].j * I).to_dense() == f[1].dense);
  REQUIRE((I * f[0].j).to_dense() == f[0].dense);
}

TEST_CASE("product: refuses factors that do not compose", "[core][jacobian]") {
  const Case a = make(true, 3, 2, 4, 600);
  REQUIRE_THROWS_AS(a.j * make(true, 3, 2, 4, 610).j, Error);   // inner widths 4 vs 2
  REQUIRE_THROWS_AS(a.j * make(false, 3, 2, 4, 620).j, Error);
  REQUIRE_THROWS_AS(make(false, 2, 6, 4, 630).j * make(false, 4, 2, 3, 640).j, Error);  // 8 = 8 rows but 2 vs 4 tokens
  try {
    (void)(a.j * make(true, 3, 2, 4, 650).j);
    FAIL("no error");
  } catch (const Error& e) {
    REQUIRE(e.kind() == ErrorKind::Internal);
  }
}

TEST_CASE("products are bit-identical at any OpenMP thread count", "[core][jacobian]") {
  const Index n = 7, d = 6;  // more tokens than threads, so every thread gets a share of the token loop
  const int saved = omp_get_max_threads();
  std::vector<Mat> results;
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    const Case t1 = make(true, n, d, d, 700), t2 = make(true, n, d, d, 710), dn = make(false, n, d, d, 720);
    results.push_back((t1.j * t2.j).to_dense());
    results.push_back((t1.j * dn.j).to_dense());
    results.push_back((dn.j * t2.j).to_dense());
  }
  omp_set_num_threads(saved);
  for (size_t k = 3; k < results.size(); ++k) REQUIRE(results[k] == results[k % 3]);
}
