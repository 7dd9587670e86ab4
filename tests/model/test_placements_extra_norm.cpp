// test_placements_extra_norm.cpp — the schemes that add norms or move them (b2t, normformer, sub-ln; lns, reorder,
// hybridnorm(-star)) against hand-written forwards, and peri = sandwich bit for bit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "placement_fixtures.hpp"

using namespace gradflow;
using namespace gradflow::test;
using namespace gradflow::test::by_hand;

TEST_CASE("b2t, normformer and sub-ln blocks match hand-written forwards", "[placements]") {
  const Mat x0 = input(small_config("post"));
  SECTION("b2t: h = LN1(x + A(x)); y = LN2(h + F(h) + x)") {
    Model m(small_config("b2t", 2));
    initialize(m, init_config("xavier"));
    const ParamStore& p = m.params();
    const std::string pre = Model::layer_prefix(0);
    const Mat h = layernorm(x0 + linear(p, pre + "self_attn.out_proj", attention_heads(p, pre, x0, 2)));
    const Mat y = layernorm(h + ffn(p, pre, h, false) + x0);
    BlockCache bc;
    CHECK(rel_err(m.block_forward(0, x0, bc), y) < kAlgebraTol);
  }
  SECTION("normformer: h = x + attn_ln(c ⊙ A(LN1 x)); y = w ⊙ h + F'(LN2 h)") {
    Model m(small_config("normformer", 2));
    initialize(m, init_config("xavier"));
    ParamStore& p = m.params();
    const std::string pre = Model::layer_prefix(0);
    REQUIRE(p.at(pre + "c_attn").size() == 2);
    REQUIRE(p.at(pre + "w_resid").size() == 8);
    REQUIRE(p.at(pre + "attn_ln.weight").size() == 8);
    REQUIRE(p.at(pre + "ffn_layernorm.weight").size() == 16);
    p.at(pre + "c_attn") << 0.5, 2.0;  // away from 1, so the head grouping matters
    RowVec w(8);
    w << 1, 2, 3, 4, 5, 6, 7, 8;
    p.at(pre + "w_resid") = w * 0.25;
    const Mat u = layernorm(x0);
    Mat a = linear(p, pre + "self_attn.out_proj", attention_heads(p, pre, u, 2));
    a.leftCols(4) *= 0.5;
    a.rightCols(4) *= 2.0;
    const Mat h = x0 + layernorm(a);
    const Mat y = (h.array().rowwise() * (w * 0.25).array()).matrix() + ffn(p, pre, layernorm(h), true);
    BlockCache bc;
    CHECK(rel_err(m.block_forward(0, x0, bc), y) < kAlgebraTol);
  }
  SECTION("sub-ln: h = x + out_proj(LN(heads(LN1 x))); y = h + F'(LN2 h)") {
    Model m(small_config("sub-ln", 2));
    initialize(m, init_config("xavier"));
    const ParamStore& p = m.params();
    const std::string pre = Model::layer_prefix(0);
    REQUIRE(p.at(pre + "self_attn.inner_attn_ln.weight").size() == 8);
    REQUIRE(p.at(pre + "ffn_layernorm.weight").size() == 16);
    const Mat h = x0 + linear(p, pre + "self_attn.out_proj", layernorm(attention_heads(p, pre, layernorm(x0), 2)));
    const Mat y = h + ffn(p, pre, layernorm(h), true);
    BlockCache bc;
    CHECK(rel_err(m.block_forward(0, x0, bc), y) < kAlgebraTol);
    CHECK(m.has_final_norm());
  }
}

TEST_CASE("the 2023-2025 schemes (lns, reorder, hybridnorm, hybridnorm-star) match hand-written forwards",
          "[placements]") {
  const Mat x0 = input(small_config("post"));
  auto attn = [](const ParamStore& p, const std::string& pre, const Mat& x) {
    return linear(p, pre + "self_attn.out_proj", attention_heads(p, pre, x, 2));
  };
  auto attn_qkv = [](const ParamStore& p, const std::string& pre, const Mat& x) {
    return linear(p, pre + "self_attn.out_proj", attention_heads_qkv_norm(p, pre, x, 2));
  };
  SECTION("lns: h = x + A(LN1(x)/sqrt(l)); y = h + F(LN2(h)/sqrt(l)), l = block + 1; block 0 is pre's") {
    Model m(small_config("lns", 3)), pre_ln(small_config("pre", 3));
    initialize(m, init_config("xavier"));
    initialize(pre_ln, init_config("xavier"));
    const ParamStore& p = m.params();
    for (Index b : {1, 2}) {
      const std::string pre = Model::layer_prefix(b);
      const double k = 1.0 / std::sqrt(static_cast<double>(b + 1));
      const Mat h = x0 + attn(p, pre, k * layernorm(x0));
      const Mat y = h + ffn(p, pre, k * layernorm(h), false);
      BlockCache bc;
      CHECK(rel_err(m.block_forward(b, x0, bc), y) < kAlgebraTol);
    }
    BlockCache a, b;
    CHECK(m.block_forward(0, x0, a) == pre_ln.block_forward(0, x0, b));  // 1/sqrt(1) = 1: exactly Pre-LN
    CHECK(m.has_final_norm());
  }
  SECTION("reorder: h = x + LN1(A(x)); y = h + LN2(F(h))") {
    Model m(small_config("reorder", 2));
    initialize(m, init_config("xavier"));
    const ParamStore& p = m.params();
    const std::string pre = Model::layer_prefix(1);
    const Mat h = x0 + layernorm(attn(p, pre, x0));
    const Mat y = h + layernorm(ffn(p, pre, h, false));
    BlockCache bc;
    CHECK(rel_err(m.block_forward(1, x0, bc), y) < kAlgebraTol);
    CHECK(m.has_final_norm());
  }
  SECTION("hybridnorm: h = x + A'(x) with Q, K, V normalized per head; y = LN2(h) + F(LN2(h))") {
    for (const std::string name : {"hybridnorm", "hybridnorm-star"}) {
      INFO(name);
      Model m(small_config(name, 2));
      initialize(m, init_config("xavier"));
      const ParamStore& p = m.params();
      const std::string pre = Model::layer_prefix(1);
      for (const char* nm : {"q_norm", "k_norm", "v_norm"})
        REQUIRE(p.at(pre + "self_attn." + nm + ".weight").size() == 4);  // d/h = 8/2
      const Mat h = layernorm(x0 + attn_qkv(p, pre, x0));
      const Mat y = h + ffn(p, pre, h, false);
      BlockCache bc;
      CHECK(rel_err(m.block_forward(1, x0, bc), y) < kAlgebraTol);
      CHECK(m.has_final_norm());
      // block 0: as every other for hybridnorm; Pre-Norm in attention and FFN for HybridNorm*
      const std::string p0 = Model::layer_prefix(0);
      const Mat y0 = name == "hybridnorm" ? Mat(layernorm(x0 + attn_qkv(p, p0, x0)) +
                                                ffn(p, p0, layernorm(x0 + attn_qkv(p, p0, x0)), false))
                                          : Mat(x0 + attn_qkv(p, p0, layernorm(x0)) +
                                                ffn(p, p0, layernorm(x0 + attn_qkv(p, p0, layernorm(x0))), false));
      BlockCache bc0;
      CHECK(rel_err(m.block_forward(0, x0, bc0), y0) < kAlgebraTol);
      CHECK(p.has(p0 + "norm1.weight") == (name == "hybridnorm-star"));
    }
  }
}

TEST_CASE("peri is an alias of sandwich: the same parameters and numbers bit for bit", "[placements]") {
  Model peri(small_config("peri", 2)), sandwich(small_config("sandwich", 2));
  initialize(peri, init_config("xavier"));
  initialize(sandwich, init_config("xavier"));
  REQUIRE(peri.params().size() == sandwich.params().size());
  for (size_t i = 0; i < peri.params().size(); ++i) {
    CHECK(peri.params().all()[i].name == sandwich.params().all()[i].name);
    CHECK(peri.params().all()[i].value == sandwich.params().all()[i].value);
  }
  const Mat x0 = input(small_config("peri")), g = random_normal(kSeed, "cotangent", kTokens, 8);
  const Trace a = peri.forward(x0), b = sandwich.forward(x0);
  CHECK(a.y == b.y);
  ParamGrads ga(peri.params()), gb(sandwich.params());
  CHECK(peri.backward(a, g, &ga) == sandwich.backward(b, g, &gb));
  for (size_t i = 0; i < peri.params().size(); ++i) CHECK(ga[static_cast<int>(i)] == gb[static_cast<int>(i)]);
  nlohmann::ordered_json j;
  find_placement("peri").config_fields(peri.config(), j);
  CHECK(j["placement_alias_of"] == "sandwich");
  CHECK(find_placement("peri").equation().find("alias of sandwich") != std::string::npos);
}
