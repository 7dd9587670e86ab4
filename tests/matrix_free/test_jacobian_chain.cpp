// test_jacobian_chain.cpp — JacobianChain (src/matrix_free/jacobian_chain.cpp): J·V and Jᵀ·U through JVP/VJP
// equal the explicit products of B_l (context.cpp), stacked copies included; power-of-two rescaling is exact
// and keeps products of huge scale; a NaN stops with Error(Numeric) naming the block.
#include <catch2/catch.hpp>

#include <cmath>

#include "gradflow/core/error.hpp"
#include "gradflow/matrix_free/jacobian_chain.hpp"
#include "small_context.hpp"
#include "tolerances.hpp"

using namespace gradflow;
using namespace gradflow::test;

namespace {
double rel(const Mat& a, const Mat& b) { return (a - b).norm() / b.norm(); }
Mat flat_col(const Mat& m) { return Eigen::Map<const Mat>(m.data(), m.size(), 1); }
}  // namespace

TEST_CASE("chain J·V and Jᵀ·U equal the explicit Jacobians, for every (from, to)", "[matrix_free]") {
  for (const std::string placement : {"post", "pre", "resi-dual"}) {
    auto s = make_small_context(placement);
    const AnalysisContext& ctx = *s.ctx;
    const Index L = ctx.model.layers(), n = ctx.tokens(), d = ctx.width();
    const Index k = 3;  // stacked copies
    const Mat V = random_normal(11, "v", k * n, d);
    for (Index from = 0; from < L; ++from)
      for (Index to = from + 1; to <= L; ++to) {
        const Mat J = ctx.jacobian_between(from, to);  // (N_out, N): resi-dual's is (n·d, n·2d) when to = L
        const JacobianChain chain(ctx.model, ctx.trace, from, to, "test");
        REQUIRE(chain.out_size() == J.rows());
        REQUIRE(chain.size() == J.cols());
        const Mat U = random_normal(12, "u", k * n, chain.out_width());
        const Scaled jv = chain.jvp({V, 0}), ju = chain.vjp({U, 0});
        INFO(placement << " from " << from << " to " << to);
        REQUIRE(jv.exp2 == 0);
        REQUIRE(ju.exp2 == 0);
        for (Index c = 0; c < k; ++c) {
          const Mat v = V.middleRows(c * n, n), u = U.middleRows(c * n, n);
          const Mat want_jv = J * flat_col(v), want_ju = J.transpose() * flat_col(u);
          CHECK(rel(flat_col(Mat(jv.m.middleRows(c * n, n))), want_jv) < kCrossTol);
          CHECK(rel(flat_col(Mat(ju.m.middleRows(c * n, n))), want_ju) < kCrossTol);
        }
      }
  }
}

TEST_CASE("rebalance rescales by exact powers of two, only out of range", "[matrix_free]") {
  Mat m = random_normal(3, "m", 4, 5);
  Scaled a{m, 0};
  rebalance(a);
  REQUIRE(a.exp2 == 0);
  REQUIRE(a.m == m);
  Scaled big{m * std::ldexp(1.0, 600), 0};
  rebalance(big);
  REQUIRE(big.exp2 > 500);
  // exact: scaling back gives the very same bits
  REQUIRE(Mat(big.m * std::ldexp(1.0, static_cast<int>(big.exp2 - 600))) == m);
  Scaled tiny{m * std::ldexp(1.0, -700), 0};
  rebalance(tiny);
  REQUIRE(tiny.exp2 < -600);
  REQUIRE(Mat(tiny.m * std::ldexp(1.0, static_cast<int>(tiny.exp2 + 700))) == m);
}

TEST_CASE("a chain keeps a tangent of scale 2^1000 finite and exact", "[matrix_free]") {
  auto s = make_small_context("pre");
  const AnalysisContext& ctx = *s.ctx;
  const JacobianChain P(ctx.model, ctx.trace, 0, ctx.model.layers(), "P_0");
  const Mat v = random_normal(4, "v", ctx.tokens(), ctx.width());
  const Scaled ref = P.jvp({v, 0});
  // the same tangent stored as 2^1000 · v: a double holds up to ~2^1024, so each block would overflow soon
  const Scaled big = P.jvp({v, 1000});
  REQUIRE(big.m.allFinite());
  REQUIRE(big.exp2 - ref.exp2 == 1000);
  REQUIRE(rel(big.m, ref.m) < kCrossTol);
}

TEST_CASE("a NaN inside the chain stops with a numeric error naming the block and the quantity", "[matrix_free]") {
  auto s = make_small_context("post");
  const AnalysisContext& ctx = *s.ctx;
  // poison block 2's out_proj weight after the forward pass: the JVP through block 2 turns NaN
  auto& params = s.model->params();
  for (size_t i = 0; i < params.all().size(); ++i)
    if (params.all()[i].name == "layers.2.self_attn.out_proj.weight") params[static_cast<int>(i)](0, 0) = NAN;
  const JacobianChain P(ctx.model, ctx.trace, 0, ctx.model.layers(), "P_0 = dy/dx_0");
  try {
    P.jvp({random_normal(1, "v", ctx.tokens(), ctx.width()), 0});
    FAIL("no error");
  } catch (const Error& e) {
    REQUIRE(e.kind() == ErrorKind::Numeric);
    const std::string msg = e.what();
    INFO(msg);
    REQUIRE(msg.find("block 2") != std::string::npos);
    REQUIRE(msg.find("P_0") != std::string::npos);
  }
}
