// test_chain_singular.cpp — matrix-free top-3 singular values (Lanczos on JVP/VJP, chain_singular.cpp) of every
// P_l and B_l equal the explicit ones (LAPACK SVD of the dense matrices, context.cpp) to kLanczosTol relative,
// and Lanczos reports convergence.
#include <catch2/catch.hpp>

#include <cmath>

#include "gradflow/linalg/svd.hpp"
#include "gradflow/matrix_free/chain_singular.hpp"
#include "small_context.hpp"
#include "tolerances.hpp"

using namespace gradflow;
using namespace gradflow::test;

namespace {
void require_top3(const JacobianChain& J, const Mat& dense) {
  const Vec want = singular_values(dense).head(3);
  const ChainSingular got = chain_top_singular(J, 3, 9);
  INFO(J.what() << ": explicit " << want.transpose() << ", Lanczos " << got.values.transpose());
  REQUIRE(got.solver.converged);
  REQUIRE(got.solver.operations > 0);
  REQUIRE(got.values.size() == 3);
  for (Index i = 0; i < 3; ++i) {
    CHECK(std::abs(got.values(i) - want(i)) <= kLanczosTol * want(i));
    CHECK(std::abs(got.log10_values(i) - std::log10(want(i))) <= kLanczosTol);
  }
}
}  // namespace

TEST_CASE("Lanczos top-3 of every P_l and B_l equals the explicit SVD", "[matrix_free]") {
  // resi-dual: rectangular operators (P_l and B_{L-1} are N × 2N)
  for (const std::string placement : {"post", "pre", "sandwich", "resi-dual"}) {
    auto s = make_small_context(placement, 5);
    const AnalysisContext& ctx = *s.ctx;
    const Index L = ctx.model.layers();
    ctx.for_each_product([&](Index l, const Mat& B, const Mat& P) {
      INFO(placement << " layer " << l);
      require_top3(JacobianChain(ctx.model, ctx.trace, l, L, "P_" + std::to_string(l)), P);
      require_top3(JacobianChain(ctx.model, ctx.trace, l, l + 1, "B_" + std::to_string(l)), B);
    });
  }
}

TEST_CASE("Lanczos top-1 at N = 96 (beyond the dense fallback) equals the explicit SVD", "[matrix_free]") {
  auto s = make_small_context("post", 3, 8, /*tokens=*/12);
  const AnalysisContext& ctx = *s.ctx;
  const Mat P0 = ctx.jacobian_between(0, ctx.model.layers());
  const ChainSingular got = chain_top_singular(JacobianChain(ctx.model, ctx.trace, 0, ctx.model.layers(), "P_0"), 1, 3);
  const double want = singular_values(P0)(0);
  REQUIRE(got.solver.converged);
  REQUIRE(got.solver.iterations >= 1);  // genuinely iterative (the dense fallback reports 0 restarts)
  REQUIRE(std::abs(got.values(0) - want) <= kLanczosTol * want);
}

TEST_CASE("Lanczos on B_l - I equals the explicit ||B_l - I||_2 (how far each block is from the identity)",
          "[matrix_free]") {
  for (const std::string placement : {"post", "pre", "rezero"}) {
    auto s = make_small_context(placement, 3);
    const AnalysisContext& ctx = *s.ctx;
    ctx.for_each_product([&](Index l, const Mat& B, const Mat&) {
      INFO(placement << " layer " << l);
      const Mat BmI = B - Mat::Identity(B.rows(), B.cols());
      const double want = singular_values(BmI)(0);
      const ChainSingular got = chain_top_singular_minus_identity(JacobianChain(ctx.model, ctx.trace, l, l + 1, "B"), 1, 4);
      if (want == 0) {  // ReZero at alpha = 0: every block is exactly the identity
        REQUIRE(placement == "rezero");
        REQUIRE(got.solver.converged);
        CHECK(got.values.size() == 1);
        CHECK(got.values(0) == 0);
        return;
      }
      REQUIRE(got.solver.converged);
      CHECK(std::abs(got.values(0) - want) <= kLanczosTol * want);
    });
  }
}
