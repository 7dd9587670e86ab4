// test_placements_scaled_residual.cpp — the scaled-residual family (src/model/placements/): ReZero with α = 0 is
// exactly the identity, DeepNet's α/β (formulas, overrides, where the model applies them), Admin's profiled ω
// against a hand computation of the profiling pass.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "placement_fixtures.hpp"

using namespace gradflow;
using namespace gradflow::test;
using namespace gradflow::test::by_hand;

TEST_CASE("rezero with alpha = 0 is exactly the identity", "[placements]") {
  ModelConfig c = small_config("rezero", 4);
  c.scheme.numbers["rezero-alpha"] = 0.0;
  Model m(c);
  initialize(m, init_config("torch"));
  const Mat x0 = input(c);
  const Trace t = m.forward(x0);
  REQUIRE(!m.has_final_norm());
  CHECK(t.y == x0);
  const Mat I = Mat::Identity(kTokens * c.d_model, kTokens * c.d_model);
  for (Index l = 0; l < m.layers(); ++l) {
    INFO("block " << l);
    CHECK(m.block_jacobian(l, t.blocks[static_cast<size_t>(l)]).to_dense() == I);
  }
  const Mat g = random_normal(kSeed, "cotangent", kTokens, c.d_model);
  CHECK(m.backward(t, g, nullptr) == g);
}

namespace {
double deepnorm_alpha(const ModelConfig& c) { return reported_constant(c, "deepnorm_alpha"); }
double deepnorm_beta(const ModelConfig& c) { return reported_constant(c, "deepnorm_beta"); }
}  // namespace

TEST_CASE("deepnorm alpha and beta follow DeepNet's encoder-only formulas", "[placements]") {
  for (Index L : {1, 6, 24, 100}) {
    ModelConfig c = small_config("deepnorm", L);
    INFO("L = " << L);
    CHECK(deepnorm_alpha(c) == std::pow(2.0 * double(L), 0.25));
    CHECK(deepnorm_beta(c) == std::pow(8.0 * double(L), -0.25));
  }
  ModelConfig c6 = small_config("deepnorm", 6), c24 = small_config("deepnorm", 24);
  CHECK(deepnorm_alpha(c6) == Approx(1.8612097182041991).epsilon(kClosedFormTol));  // 12^(1/4)
  CHECK(deepnorm_beta(c6) == Approx(0.37991784282579627).epsilon(kClosedFormTol));  // 48^(-1/4)
  CHECK(deepnorm_alpha(c24) == Approx(2.6321480259049848).epsilon(kClosedFormTol));  // 48^(1/4)
  CHECK(deepnorm_beta(c24) == Approx(0.2686424829558855).epsilon(kClosedFormTol));  // 192^(-1/4)
  c6.scheme.numbers["deepnorm-alpha"] = 2.0;
  c6.scheme.numbers["deepnorm-beta"] = 0.5;
  CHECK(deepnorm_alpha(c6) == 2.0);
  CHECK(deepnorm_beta(c6) == 0.5);

  // The model uses α as the skip and β on v_proj, out_proj, linear1, linear2 (weights only; q, k rows unchanged).
  ModelConfig cd = small_config("deepnorm", 6), cp = small_config("post", 6);
  Model md(cd), mp(cp);
  initialize(md, init_config("xavier-normal"));
  initialize(mp, init_config("xavier-normal"));
  const double a = deepnorm_alpha(cd), b = deepnorm_beta(cd);
  for (const auto& u : md.block(2)) CHECK(u.spec.skip_scale == a);
  const Index d = cd.d_model;
  const std::string pre = Model::layer_prefix(2);
  const Mat& Wd = md.params().at(pre + "self_attn.in_proj_weight");
  const Mat& Wp = mp.params().at(pre + "self_attn.in_proj_weight");
  CHECK(Wd.topRows(2 * d) == Wp.topRows(2 * d));
  CHECK(Wd.bottomRows(d) == Mat(Wp.bottomRows(d) * b));
  for (const char* w : {"self_attn.out_proj.weight", "linear1.weight", "linear2.weight"})
    CHECK(md.params().at(pre + w) == Mat(mp.params().at(pre + w) * b));
}

TEST_CASE("admin's omegas match a hand computation of the profiling pass", "[placements]") {
  ModelConfig c = small_config("admin", 3);
  Model m(c);
  initialize(m, init_config("xavier"));
  const Mat x0 = input(c);
  {  // before profiling ω = 1 and admin is exactly post (same names, same weights)
    Model mp(small_config("post", 3));
    initialize(mp, init_config("xavier"));
    CHECK(m.forward(x0).y == mp.forward(x0).y);
  }
  profile_initialization(m, x0);
  const ParamStore& p = m.params();
  double omega = 1.0;
  Mat x = x0;
  for (Index l = 0; l < c.layers; ++l) {
    const std::string pre = Model::layer_prefix(l);
    for (const char* sub : {"attn", "ffn"}) {
      INFO("layer " << l << " " << sub);
      const Mat& w = p.at(pre + sub + "_omega");
      REQUIRE(w.size() == c.d_model);
      CHECK((w.array() == w(0, 0)).all());
      CHECK(w(0, 0) == Approx(omega).epsilon(kAlgebraTol));
      const Mat f = std::string(sub) == "attn"
                        ? linear(p, pre + "self_attn.out_proj", attention_heads(p, pre, x, c.heads))
                        : ffn(p, pre, x, false);
      const double next = std::sqrt(variance(omega * x) + variance(f));
      x = layernorm(omega * x + f);
      omega = next;
    }
  }
  CHECK(p.at("layers.0.attn_omega")(0, 0) == 1.0);
  CHECK(rel_err(m.forward(x0).y, x) < kAlgebraTol);
}
