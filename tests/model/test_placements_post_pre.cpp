// test_placements_post_pre.cpp — the schemes that combine Post and Pre: Mix-LN with K = 0 or K = L is pure pre
// or pure post bit for bit, and ResiDual's two streams and output against a hand-written forward.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "placement_fixtures.hpp"

using namespace gradflow;
using namespace gradflow::test;
using namespace gradflow::test::by_hand;

TEST_CASE("mix with K = 0 or K = L equals pure pre or pure post to the last bit", "[placements]") {
  const Index L = 4;
  for (const std::string order : {"post-first", "pre-first"})
    for (Index K : {Index(0), L}) {
      ModelConfig cm = small_config("mix", L);
      cm.scheme.words["mix-order"] = order;
      cm.scheme.counts["mix-post-layers"] = K;
      ModelConfig ct = small_config(K == 0 ? "pre" : "post", L);
      INFO("order " << order << ", K = " << K);
      Model mm(cm), mt(ct);
      initialize(mm, init_config("torch"));
      initialize(mt, init_config("torch"));
      const Mat x0 = input(cm);
      profile_initialization(mm, x0);
      profile_initialization(mt, x0);
      REQUIRE(mm.params().size() == mt.params().size());
      for (size_t i = 0; i < mm.params().size(); ++i) {
        REQUIRE(mm.params().all()[i].name == mt.params().all()[i].name);
        REQUIRE(mm.params().all()[i].value == mt.params().all()[i].value);
      }
      REQUIRE(mm.has_final_norm() == mt.has_final_norm());
      const Trace tm = mm.forward(x0), tt = mt.forward(x0);
      CHECK(tm.y == tt.y);
      const Mat g = random_normal(kSeed, "cotangent", kTokens, cm.d_model);
      ParamGrads gm(mm.params()), gt(mt.params());
      std::vector<Mat> dxm, dxt;
      CHECK(mm.backward(tm, g, &gm, &dxm) == mt.backward(tt, g, &gt, &dxt));
      for (size_t i = 0; i < gm.size(); ++i) CHECK(gm[static_cast<int>(i)] == gt[static_cast<int>(i)]);
      for (size_t l = 0; l < dxm.size(); ++l) CHECK(dxm[l] == dxt[l]);
    }
}

TEST_CASE("resi-dual: the two streams and the output match a hand-written forward", "[placements]") {
  // x_a = x_d = x_0; per sublayer f: x_d <- x_d + f(x_a), x_a <- LN(x_a + f(x_a)); y = x_a + LN_f(x_d)
  ModelConfig c = small_config("resi-dual", 2);
  c.residual_scale = 0.7;
  Model m(c);
  initialize(m, init_config("xavier"));
  const ParamStore& p = m.params();
  const Mat x0 = input(c);
  Mat xa = x0, xd = x0;
  for (Index b = 0; b < 2; ++b) {
    const std::string pre = Model::layer_prefix(b);
    const Mat fa = 0.7 * linear(p, pre + "self_attn.out_proj", attention_heads(p, pre, xa, 2));
    xd += fa;
    xa = layernorm(xa + fa);
    const Mat ff = 0.7 * ffn(p, pre, xa, false);
    xd += ff;
    xa = layernorm(xa + ff);
  }
  const Trace t = m.forward(x0);
  REQUIRE(m.two_streams());
  REQUIRE(m.state_width() == 2 * c.d_model);
  CHECK(t.x[0].leftCols(c.d_model) == x0);
  CHECK(t.x[0].rightCols(c.d_model) == x0);
  CHECK(rel_err(Mat(t.x[2].leftCols(c.d_model)), xa) < kAlgebraTol);
  CHECK(rel_err(Mat(t.x[2].rightCols(c.d_model)), xd) < kAlgebraTol);
  CHECK(rel_err(t.y, Mat(xa + layernorm(xd))) < kAlgebraTol);
  // the state's Jacobians: B_l is (2N, 2N), the head (N, 2N); the input gradient sums the streams' at depth 0
  CHECK(m.block_jacobian(0, t.blocks[0]).rows() == 2 * kTokens * c.d_model);
  CHECK(m.head_jacobian(t.head, kTokens).cols() == 2 * kTokens * c.d_model);
  std::vector<Mat> dx;
  const Mat g = random_normal(kSeed, "g", kTokens, c.d_model);
  const Mat dx0 = m.backward(t, g, nullptr, &dx);
  CHECK(dx[0].cols() == 2 * c.d_model);
  CHECK(dx0 == Mat(dx[0].leftCols(c.d_model) + dx[0].rightCols(c.d_model)));
  // the final norm is the scheme's output: refused without it
  ModelConfig no_norm = c;
  no_norm.final_norm = false;
  REQUIRE_THROWS_WITH(Model(no_norm), Catch::Contains("--no-final-norm") && Catch::Contains("fix"));
}
