// test_placements_init.cpp — the init presets the placements bring (t-fixup, sub-ln γ, b2t's rescaling) and the
// role every parameter records when the model creates it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "placement_fixtures.hpp"

using namespace gradflow;
using namespace gradflow::test;
using namespace gradflow::test::by_hand;

TEST_CASE("init presets: t-fixup, sub-ln gamma and b2t rescaling", "[placements][init]") {
  const Index L = 6, d = 8;
  const std::string pre = Model::layer_prefix(3);
  Model xav(small_config("post", L));
  initialize(xav, init_config("xavier"));
  const ParamStore& px = xav.params();
  SECTION("t-fixup: 0.67 L^(-1/4) on v (as Xavier of its own block), out_proj, linear1, linear2; biases 0") {
    Model m(small_config("nonorm", L));
    initialize(m, init_config("t-fixup"));
    const ParamStore& p = m.params();
    const double t = 0.67 * std::pow(double(L), -0.25);
    CHECK(tfixup_scale(m.config()) == t);
    const Mat& W = p.at(pre + "self_attn.in_proj_weight");
    const Mat& Wx = px.at(pre + "self_attn.in_proj_weight");
    CHECK(W.topRows(2 * d) == Wx.topRows(2 * d));
    CHECK(W.bottomRows(d) == Mat(Wx.bottomRows(d) * (std::sqrt(2.0) * t)));
    for (const char* w : {"self_attn.out_proj.weight", "linear1.weight", "linear2.weight"})
      CHECK(p.at(pre + w) == Mat(px.at(pre + w) * t));
    for (const char* b : {"self_attn.in_proj_bias", "self_attn.out_proj.bias", "linear1.bias", "linear2.bias"})
      CHECK(p.at(pre + b).isZero(0.0));
  }
  SECTION("sub-ln: gamma = sqrt(ln 2L) on v_proj, out_proj, linear1, linear2") {
    Model m(small_config("sub-ln", L));
    initialize(m, init_config("xavier"));
    const double g = reported_constant(m.config(), "subln_gamma");
    CHECK(g == Approx(std::sqrt(std::log(12.0))).epsilon(kClosedFormTol));
    const Mat& W = m.params().at(pre + "self_attn.in_proj_weight");
    const Mat& Wx = px.at(pre + "self_attn.in_proj_weight");
    CHECK(W.topRows(2 * d) == Wx.topRows(2 * d));
    CHECK(W.bottomRows(d) == Mat(Wx.bottomRows(d) * g));
    CHECK(m.params().at(pre + "linear2.weight") == Mat(px.at(pre + "linear2.weight") * g));
    CHECK(m.params().at(pre + "linear2.bias") == px.at(pre + "linear2.bias"));
  }
  SECTION("b2t: every weight matrix x L^(-1/2); --init-scale multiplies on top") {
    Model m(small_config("b2t", L));
    InitConfig ic = init_config("xavier");
    ic.scale = 0.5;
    initialize(m, ic);
    const double s = 1.0 / std::sqrt(double(L));
    CHECK(m.params().at(pre + "self_attn.in_proj_weight") == Mat(px.at(pre + "self_attn.in_proj_weight") * s));
    CHECK(m.params().at(pre + "linear1.weight") == Mat(px.at(pre + "linear1.weight") * s));
    CHECK(m.params().at(pre + "linear2.weight") == Mat(Mat(px.at(pre + "linear2.weight") * s) * 0.5));
  }
}

TEST_CASE("every parameter records its role when the model creates it", "[placements][init]") {
  const std::vector<std::pair<std::string, ParamRole>> by_suffix = {
      {"self_attn.in_proj_weight", ParamRole::InProjWeight}, {"self_attn.in_proj_bias", ParamRole::InProjBias},
      {"out_proj.weight", ParamRole::OutProjWeight},        {"out_proj.bias", ParamRole::OutProjBias},
      {"linear1.weight", ParamRole::Linear1Weight},         {"linear1.bias", ParamRole::Linear1Bias},
      {"linear2.weight", ParamRole::Linear2Weight},         {"linear2.bias", ParamRole::Linear2Bias},
      {"resweight", ParamRole::Gate},                       {"attn_omega", ParamRole::SkipVector},
      {"ffn_omega", ParamRole::SkipVector},                 {"w_resid", ParamRole::SkipVector},
      {"c_attn", ParamRole::HeadScale},                     {".alpha", ParamRole::NormAlpha},
      {".weight", ParamRole::NormWeight},                   {".bias", ParamRole::NormBias}};
  for (const auto& p : placements())
    for (NormKind nk : {NormKind::LayerNorm, NormKind::DyT}) {
      ModelConfig c = small_config(p->name(), 2);
      c.norm = nk;
      const Model m(c);
      for (const auto& param : m.params().all()) {
        INFO(p->name() << ": " << param.name);
        const auto it = std::find_if(by_suffix.begin(), by_suffix.end(), [&](const auto& s) {
          return param.name.size() >= s.first.size() &&
                 param.name.compare(param.name.size() - s.first.size(), s.first.size(), s.first) == 0;
        });
        REQUIRE(it != by_suffix.end());
        CHECK(param.role == it->second);
      }
    }
}
