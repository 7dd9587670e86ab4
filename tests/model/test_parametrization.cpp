// test_parametrization.cpp — --parametrization sp|mup|depth-mup|completep (model/parametrization.hpp): the factors
// table at known multipliers, the bases each one needs, the initialization against sp's draw role by role, and the
// forward multipliers (branch, attention logits) against the options that set the same factor by hand.
#include <catch2/catch.hpp>

#include <cmath>

#include "placement_fixtures.hpp"

using namespace gradflow;
using namespace gradflow::test;
using namespace gradflow::test::by_hand;

namespace {

Parametrization param(ParametrizationKind k, Index w0, Index l0 = 0) {
  Parametrization p;
  p.kind = k;
  p.base_width = w0;
  p.base_depth = l0;
  return p;
}

constexpr ParamRole kW = ParamRole::Linear1Weight, kB = ParamRole::Linear1Bias, kG = ParamRole::NormWeight;

}  // namespace

TEST_CASE("parametrization: the factors at m_N = 4, m_L = 4", "[parametrization][quick]") {
  SECTION("sp: every factor 1") {
    const ParametrizationFactors f = parametrization_factors(Parametrization{}, 128, 8);
    for (ParamRole r : {kW, kB, kG, ParamRole::Embedding, ParamRole::OutputHead}) {
      CHECK(f.lr(r, true) == 1.0);
      CHECK(f.weight_decay(r) == 1.0);
      for (const char* s : {"torch", "gpt2"}) CHECK(f.init(r, s) == 1.0);
    }
    CHECK(f.eps(true) == 1.0);
    CHECK((f.branch == 1.0 && f.readout == 1.0 && f.readout_init() == 1.0));
  }
  SECTION("mup: hidden matrices' lr / m_N and weight decay x m_N, gpt2's std / sqrt(m_N), fan-in biases x sqrt(m_N)") {
    const ParametrizationFactors f = parametrization_factors(param(ParametrizationKind::Mup, 32), 128, 8);
    CHECK(f.width_mult == 4.0);
    CHECK(f.lr(kW, true) == 0.25);
    CHECK(f.lr(kB, true) == 1.0);
    CHECK(f.lr(kG, true) == 1.0);
    CHECK(f.lr(ParamRole::OutputHead, false) == 1.0);
    CHECK(f.weight_decay(kW) == 4.0);
    CHECK(f.weight_decay(kB) == 1.0);
    CHECK(f.eps(true) == 1.0);
    CHECK(f.init(kW, "gpt2") == 0.5);
    CHECK(f.init(kW, "torch") == 1.0);   // U(±1/√fan_in): already ∝ m_N^(-1/2)
    CHECK(f.init(kW, "xavier") == 1.0);
    CHECK(f.init(kB, "torch") == 2.0);
    CHECK(f.init(kG, "torch") == 1.0);
    CHECK(f.branch == 1.0);
    CHECK(f.readout == 0.25);
    CHECK(f.readout_init() == 2.0);
  }
  SECTION("depth-mup: branch m_L^(-1/2), block lr x m_L^(-1/2), block eps / (m_N sqrt(m_L))") {
    const ParametrizationFactors f = parametrization_factors(param(ParametrizationKind::DepthMup, 32, 2), 128, 8);
    CHECK(f.depth_mult == 4.0);
    CHECK(f.branch == 0.5);
    CHECK(f.lr(kW, true) == 0.125);
    CHECK(f.lr(kB, true) == 0.5);
    CHECK(f.lr(kG, true) == 0.5);
    CHECK(f.lr(kG, false) == 1.0);  // the final norm
    CHECK(f.eps(true) == 0.125);
    CHECK(f.eps(false) == 1.0);
  }
  SECTION("completep: branch m_L^(-1), lr without a depth factor, block eps / (m_N m_L)") {
    const ParametrizationFactors f = parametrization_factors(param(ParametrizationKind::CompleteP, 32, 2), 128, 8);
    CHECK(f.branch == 0.25);
    CHECK(f.lr(kW, true) == 0.25);
    CHECK(f.lr(kB, true) == 1.0);
    CHECK(f.eps(true) == 0.0625);
  }
  SECTION("mu-P's logit scale: sqrt(e0)/e, SP's 1/sqrt(e) at the base width") {
    CHECK(mup_logit_scale(16, 1.0) == Approx(0.25).epsilon(kClosedFormTol));
    CHECK(mup_logit_scale(64, 4.0) == Approx(4.0 / 64.0).epsilon(kClosedFormTol));
  }
}

TEST_CASE("parametrization: the bases each one needs, refused by name otherwise", "[parametrization][quick]") {
  using K = ParametrizationKind;
  CHECK_THROWS_WITH(parametrization_factors(param(K::Mup, 0), 64, 4), Catch::Contains("--base-width"));
  CHECK_THROWS_WITH(parametrization_factors(param(K::Mup, 32, 2), 64, 4), Catch::Contains("drop --base-depth"));
  CHECK_THROWS_WITH(parametrization_factors(param(K::DepthMup, 32), 64, 4), Catch::Contains("--base-depth"));
  CHECK_THROWS_WITH(parametrization_factors(param(K::Sp, 32), 64, 4), Catch::Contains("--parametrization"));
  CHECK_THROWS_WITH(parse_parametrization("mu-p"), Catch::Contains("sp, mup, depth-mup or completep"));
  for (const char* n : {"sp", "mup", "depth-mup", "completep"}) CHECK(to_string(parse_parametrization(n)) == n);
  ModelConfig c = small_config("pre", 4);
  c.param = param(K::CompleteP, 4, 2);
  c.residual_scale = 0.5;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("--residual-scale"));
  c.param = param(K::Mup, 4);
  CHECK_NOTHROW(c.validate());  // width only: --residual-scale is another factor
}

TEST_CASE("parametrization: the initialization is sp's draw times the factor of each role", "[parametrization][quick]") {
  const Index L = 4;
  const ModelConfig sp = small_config("pre", L);  // d = 8
  for (const char* scheme : {"gpt2", "torch", "xavier"}) {
    for (ParametrizationKind k : {ParametrizationKind::Mup, ParametrizationKind::CompleteP}) {
      ModelConfig c = sp;
      c.param = param(k, 2, k == ParametrizationKind::Mup ? 0 : 1);  // m_N = 4, m_L = 4
      Model a(sp), b(c);
      initialize(a, init_config(scheme));
      initialize(b, init_config(scheme));
      const ParametrizationFactors f = c.factors();
      INFO(scheme << " " << to_string(k));
      for (size_t i = 0; i < a.params().size(); ++i) {
        const Param& pa = a.params().all()[i];
        const Param& pb = b.params().all()[i];
        INFO(pa.name);
        double factor = f.init(pa.role, scheme);
        // gpt2's own 1/√(2L) on out_proj and linear2 is dropped under a depth parametrization
        const bool gpt2_depth = std::string(scheme) == "gpt2" && c.param.scales_depth() &&
                                (pa.role == ParamRole::OutProjWeight || pa.role == ParamRole::Linear2Weight);
        if (gpt2_depth) factor *= std::sqrt(2.0 * static_cast<double>(L));
        if (pa.value.isZero(0.0)) {
          CHECK(pb.value.isZero(0.0));
        } else {
          CHECK(rel_err(pb.value, Mat(factor * pa.value)) < kClosedFormTol);
        }
      }
    }
  }
}

TEST_CASE("parametrization: its multipliers are the options that set the same factor by hand", "[parametrization][quick]") {
  const ModelConfig base = small_config("post", 4);  // d = 8, h = 2: e = 4
  const Mat x = input(base);
  SECTION("depth-mup and completep at the base width: --residual-scale m_L^(-alpha), the very same doubles") {
    for (ParametrizationKind k : {ParametrizationKind::DepthMup, ParametrizationKind::CompleteP}) {
      ModelConfig c = base, by_hand = base;
      c.param = param(k, base.d_model, 1);  // m_N = 1, m_L = 4
      by_hand.residual_scale = k == ParametrizationKind::DepthMup ? 0.5 : 0.25;
      Model a(c), b(by_hand);
      initialize(a, init_config("xavier"));
      initialize(b, init_config("xavier"));
      CHECK(a.forward(x).y == b.forward(x).y);
    }
  }
  SECTION("mup: the logit scale of --attn-scale e*m_N; an explicit --attn-scale wins") {
    ModelConfig c = base, by_hand = base;
    c.param = param(ParametrizationKind::Mup, 2);  // m_N = 4: logits x 1/sqrt(16)
    by_hand.attn_scale = 16;
    CHECK(c.logit_scale() == Approx(0.25).epsilon(kClosedFormTol));
    Model a(c), b(by_hand);  // xavier-normal: biases 0 and fan-in weights, so μP leaves the init as sp's
    initialize(a, init_config("xavier-normal"));
    initialize(b, init_config("xavier-normal"));
    CHECK(rel_err(a.forward(x).y, b.forward(x).y) < kAlgebraTol);
    c.attn_scale = 9;
    CHECK(c.logit_scale() == Approx(1.0 / 3.0).epsilon(kClosedFormTol));
  }
  SECTION("at the base width and depth every parametrization is sp, bit for bit (torch init: gpt2's own 1/sqrt(2L) "
          "is dropped under the depth ones)") {
    for (ParametrizationKind k : {ParametrizationKind::Mup, ParametrizationKind::DepthMup, ParametrizationKind::CompleteP}) {
      for (Index d : {Index{8}, Index{12}}) {  // head widths 4 and 6 (1/√6 is not exact)
        ModelConfig c = base, sp = base;
        c.d_model = sp.d_model = d;
        c.param = param(k, d, k == ParametrizationKind::Mup ? 0 : base.layers);
        CHECK(c.logit_scale() == sp.logit_scale());
        Model a(c), b(sp);
        initialize(a, init_config("torch"));
        initialize(b, init_config("torch"));
        const Mat xd = random_normal(kSeed, "input", kTokens, d);
        INFO(to_string(k) << " d " << d);
        CHECK(a.forward(xd).y == b.forward(xd).y);
      }
    }
  }
  SECTION("every placement builds its units with the branch multiplier") {
    for (const auto& p : placements()) {
      ModelConfig c = small_config(p->name(), 4);
      c.param = param(ParametrizationKind::CompleteP, c.d_model, 2);  // branch 1/2
      c.residual_scale = 1.0;
      const Model m(c);
      INFO(p->name());
      for (Index l = 0; l < m.layers(); ++l)
        for (const ResidualUnit& u : m.block(l)) CHECK(u.spec.branch_scale == 0.5);
    }
  }
}
