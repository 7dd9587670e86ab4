// test_placements.cpp — the special properties of the placement recipes (src/model/placements.cpp): ReZero with
// α = 0 is exactly the identity, DeepNet's α/β, mix's endpoints equal pre/post bit for bit, Admin's profiled ω
// against a hand computation, the new blocks (b2t, normformer, sub-ln; lns, reorder, hybridnorm(-star)) against
// hand-written forwards, peri = sandwich bit for bit, the init
// presets (t-fixup, sub-ln γ, b2t), and a finite-difference check of the derivatives each new recipe adds.
// (The full derivative matrix over every placement × norm lives in test_model_derivatives.cpp.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "gradflow/model/init.hpp"
#include "gradflow/model/placement.hpp"
#include "gradflow/ops/activation.hpp"
#include "gradflow/ops/attention.hpp"
#include "gradflow/ops/linear.hpp"
#include "small_model.hpp"
#include "tolerances.hpp"

using namespace gradflow;
using namespace gradflow::test;

namespace {

constexpr Index kTokens = 4;
constexpr uint64_t kSeed = 7;

// smooth (GELU) for finite differences
ModelConfig small_config(const std::string& placement, Index layers = 3) {
  return small_model(placement, layers, Activation::Gelu);
}

InitConfig init_config(const std::string& scheme = "xavier") {
  InitConfig i;
  i.scheme = scheme;
  i.seed = kSeed;
  return i;
}

Mat input(const ModelConfig& c) { return random_normal(kSeed, "input", kTokens, c.d_model); }

double rel_err(const Mat& a, const Mat& b) { return (a - b).norm() / std::max(b.norm(), 1e-300); }

double variance(const Mat& m) { return (m.array() - m.mean()).square().mean(); }

// LayerNorm with γ = 1, β = 0 written out (the gains are 1 at initialization).
Mat layernorm(const Mat& x, double eps = 1e-5) {
  Mat y(x.rows(), x.cols());
  for (Index i = 0; i < x.rows(); ++i) {
    const RowVec xc = x.row(i).array() - x.row(i).mean();
    y.row(i) = xc / std::sqrt(xc.squaredNorm() / static_cast<double>(x.cols()) + eps);
  }
  return y;
}

// Multi-head attention before out_proj, written out: heads concatenated (n, d).
Mat attention_heads(const ParamStore& p, const std::string& pre, const Mat& x, Index heads) {
  const Index d = x.cols(), e = d / heads;
  const Mat qkv = (x * p.at(pre + "self_attn.in_proj_weight").transpose()).rowwise() +
                  p.at(pre + "self_attn.in_proj_bias").row(0);
  Mat O(x.rows(), d);
  for (Index h = 0; h < heads; ++h) {
    Mat S = qkv.middleCols(h * e, e) * qkv.middleCols(d + h * e, e).transpose() / std::sqrt(double(e));
    for (Index i = 0; i < S.rows(); ++i) {
      S.row(i) = (S.row(i).array() - S.row(i).maxCoeff()).exp();
      S.row(i) /= S.row(i).sum();
    }
    O.middleCols(h * e, e) = S * qkv.middleCols(2 * d + h * e, e);
  }
  return O;
}

// HybridNorm's attention before out_proj, written out: Q, K, V each LayerNorm-ed per head (γ = 1, β = 0).
Mat attention_heads_qkv_norm(const ParamStore& p, const std::string& pre, const Mat& x, Index heads) {
  const Index d = x.cols(), e = d / heads;
  const Mat qkv = (x * p.at(pre + "self_attn.in_proj_weight").transpose()).rowwise() +
                  p.at(pre + "self_attn.in_proj_bias").row(0);
  Mat O(x.rows(), d);
  for (Index h = 0; h < heads; ++h) {
    const Mat Q = layernorm(qkv.middleCols(h * e, e)), K = layernorm(qkv.middleCols(d + h * e, e));
    const Mat V = layernorm(qkv.middleCols(2 * d + h * e, e));
    Mat S = Q * K.transpose() / std::sqrt(double(e));
    for (Index i = 0; i < S.rows(); ++i) {
      S.row(i) = (S.row(i).array() - S.row(i).maxCoeff()).exp();
      S.row(i) /= S.row(i).sum();
    }
    O.middleCols(h * e, e) = S * V;
  }
  return O;
}

Mat linear(const ParamStore& p, const std::string& name, const Mat& x) {
  return (x * p.at(name + ".weight").transpose()).rowwise() + p.at(name + ".bias").row(0);
}

Mat ffn(const ParamStore& p, const std::string& pre, const Mat& x, bool mid_norm) {
  Mat a = ops::activation_forward(Activation::Gelu, linear(p, pre + "linear1", x));
  if (mid_norm) a = layernorm(a);
  return linear(p, pre + "linear2", a);
}

}  // namespace

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
// A constant the placement's entry reports (placement.hpp: constants), e.g. "deepnorm_alpha".
double reported_constant(const ModelConfig& c, const std::string& key) {
  nlohmann::ordered_json j;
  find_placement(c.placement).constants(c, j);
  return j.at(key).get<double>();
}
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
  CHECK(deepnorm_alpha(c6) == Approx(1.8612097182041991).epsilon(1e-15));  // 12^(1/4)
  CHECK(deepnorm_beta(c6) == Approx(0.37991784282579627).epsilon(1e-15));  // 48^(-1/4)
  CHECK(deepnorm_alpha(c24) == Approx(2.6321480259049848).epsilon(1e-15));  // 48^(1/4)
  CHECK(deepnorm_beta(c24) == Approx(0.2686424829558855).epsilon(1e-15));  // 192^(-1/4)
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
      CHECK(w(0, 0) == Approx(omega).epsilon(1e-13));
      const Mat f = std::string(sub) == "attn"
                        ? linear(p, pre + "self_attn.out_proj", attention_heads(p, pre, x, c.heads))
                        : ffn(p, pre, x, false);
      const double next = std::sqrt(variance(omega * x) + variance(f));
      x = layernorm(omega * x + f);
      omega = next;
    }
  }
  CHECK(p.at("layers.0.attn_omega")(0, 0) == 1.0);
  CHECK(rel_err(m.forward(x0).y, x) < 1e-13);
}

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
    CHECK(rel_err(m.block_forward(0, x0, bc), y) < 1e-13);
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
    CHECK(rel_err(m.block_forward(0, x0, bc), y) < 1e-13);
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
    CHECK(rel_err(m.block_forward(0, x0, bc), y) < 1e-13);
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
      CHECK(rel_err(m.block_forward(b, x0, bc), y) < 1e-13);
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
    CHECK(rel_err(m.block_forward(1, x0, bc), y) < 1e-13);
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
      CHECK(rel_err(m.block_forward(1, x0, bc), y) < 1e-13);
      CHECK(m.has_final_norm());
      // block 0: as every other for hybridnorm; Pre-Norm in attention and FFN for HybridNorm*
      const std::string p0 = Model::layer_prefix(0);
      const Mat y0 = name == "hybridnorm" ? Mat(layernorm(x0 + attn_qkv(p, p0, x0)) +
                                                ffn(p, p0, layernorm(x0 + attn_qkv(p, p0, x0)), false))
                                          : Mat(x0 + attn_qkv(p, p0, layernorm(x0)) +
                                                ffn(p, p0, layernorm(x0 + attn_qkv(p, p0, layernorm(x0))), false));
      BlockCache bc0;
      CHECK(rel_err(m.block_forward(0, x0, bc0), y0) < 1e-13);
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
    CHECK(g == Approx(std::sqrt(std::log(12.0))).epsilon(1e-15));
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
  CHECK(rel_err(Mat(t.x[2].leftCols(c.d_model)), xa) < 1e-13);
  CHECK(rel_err(Mat(t.x[2].rightCols(c.d_model)), xd) < 1e-13);
  CHECK(rel_err(t.y, Mat(xa + layernorm(xd))) < 1e-13);
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

// Finite differences on the derivatives the new recipes add: the block Jacobian (B2T's extra path, Sub-LN's inner
// norm, NormFormer's head scale and d_ff norm, learnable skips) and the gradients of their new parameters.
TEST_CASE("new recipes: block Jacobian, JVP, VJP and new-parameter gradients vs finite differences",
          "[placements][derivatives]") {
  const double h = kFdStep;
  for (const std::string placement :
       {"admin", "b2t", "normformer", "sub-ln", "nonorm", "lns", "reorder", "hybridnorm", "hybridnorm-star",
        "resi-dual"})
    for (NormKind norm : {NormKind::LayerNorm, NormKind::RMSNorm, NormKind::DyT}) {
      ModelConfig c = small_config(placement, 2);
      c.norm = norm;
      c.residual_scale = 0.8;
      Model m(c);
      initialize(m, init_config("xavier"));
      const Mat x0 = input(c);
      profile_initialization(m, x0);
      if (placement == "normformer") {  // gains away from 1
        m.params().at("layers.1.c_attn") << 0.7, 1.3;
        m.params().at("layers.1.w_resid").array() += 0.1;
      }
      if (placement.rfind("hybridnorm", 0) == 0)  // the Q/K/V norms' gains off 1, biases off 0, DyT's α off 0.5
        for (auto& prm : m.params().all())
          if (prm.name.find("_norm.") != std::string::npos)
            prm.value += 0.2 * random_normal(kSeed, prm.name, prm.value.rows(), prm.value.cols());
      INFO(placement << " / " << to_string(norm));
      const Trace t = m.forward(x0);
      const Index w = m.state_width(), N = kTokens * w;  // resi-dual: the pair [x_a | x_d], w = 2d
      for (Index l = 0; l < m.layers(); ++l) {
        const BlockCache& bc = t.blocks[static_cast<size_t>(l)];
        const Mat& x = t.x[static_cast<size_t>(l)];
        const Mat J = m.block_jacobian(l, bc).to_dense();
        Mat Jfd(N, N);
        for (Index k = 0; k < N; ++k) {
          Mat xp = x, xm = x;
          xp(k / w, k % w) += h;
          xm(k / w, k % w) -= h;
          BlockCache cp, cm;
          const Mat diff = (m.block_forward(l, xp, cp) - m.block_forward(l, xm, cm)) / (2 * h);
          Jfd.col(k) = Eigen::Map<const Eigen::VectorXd>(Mat(diff).data(), N);  // row-major flattening
        }
        INFO("block " << l);
        CHECK(rel_err(J, Jfd) < kFdTol);
        const Mat v = random_normal(kSeed, "v", kTokens, w), u = random_normal(kSeed, "u", kTokens, w);
        const Mat Jv = m.block_jvp(l, bc, v);
        const Eigen::VectorXd Jv_dense = J * Eigen::Map<const Eigen::VectorXd>(v.data(), N);
        CHECK((Eigen::Map<const Eigen::VectorXd>(Jv.data(), N) - Jv_dense).norm() <= kCrossTol * Jv_dense.norm());
        const Mat uJ = m.block_vjp(l, bc, u, nullptr);
        const Eigen::VectorXd uJ_dense = J.transpose() * Eigen::Map<const Eigen::VectorXd>(u.data(), N);
        CHECK((Eigen::Map<const Eigen::VectorXd>(uJ.data(), N) - uJ_dense).norm() <= kCrossTol * uJ_dense.norm());
      }
      // gradients of the recipe's own parameters, L = Σ g ⊙ y
      const Mat g = random_normal(kSeed, "cotangent", kTokens, c.d_model);
      ParamGrads grads(m.params());
      m.backward(t, g, &grads);
      auto loss = [&] { return m.forward(x0).y.cwiseProduct(g).sum(); };
      int checked = 0;
      for (size_t i = 0; i < m.params().size(); ++i) {
        Param& prm = m.params().all()[i];
        const std::string& nm = prm.name;
        bool extra = false;
        for (const char* key :
             {"omega", "c_attn", "w_resid", "ffn_layernorm", "inner_attn_ln", "attn_ln", "q_norm", "k_norm", "v_norm"})
          extra = extra || nm.find(key) != std::string::npos;
        if (!extra) continue;
        Mat fd(prm.value.rows(), prm.value.cols());
        for (Index k = 0; k < prm.value.size(); ++k) {
          const double keep = prm.value.data()[k];
          prm.value.data()[k] = keep + h;
          const double lp = loss();
          prm.value.data()[k] = keep - h;
          const double lm = loss();
          prm.value.data()[k] = keep;
          fd.data()[k] = (lp - lm) / (2 * h);
        }
        INFO("parameter " << nm);
        if (nm.find("k_norm.bias") != std::string::npos) {
          // exactly 0: β_k adds q_i·β_k/√e to every score of query i alike, which the softmax cancels
          CHECK(grads[static_cast<int>(i)].norm() <= 1e-12);
          CHECK(fd.norm() <= 1e-8);  // central differences of a constant: rounding only
        } else {
          CHECK(rel_err(grads[static_cast<int>(i)], fd) < kFdTol);
        }
        ++checked;
      }
      if (placement != "b2t" && placement != "nonorm" && placement != "lns" && placement != "reorder" &&
          placement != "resi-dual")
        CHECK(checked > 0);
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

TEST_CASE("scheme options: declared by their placement, validated, reported as resolved", "[placements]") {
  // each option once in the registry's list, and in its placement's summary line
  for (const auto& p : placements())
    for (const auto& o : p->options()) {
      INFO(p->name() << " --" << o.name);
      CHECK(p->options_summary().find("--" + o.name) != std::string::npos);
      CHECK(std::count_if(scheme_options().begin(), scheme_options().end(),
                          [&](const SchemeOption& q) { return q.name == o.name; }) == 1);
    }
  ModelConfig c = small_config("mix", 4);
  c.scheme.words["mix-order"] = "sideways";
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("--mix-order 'sideways'") && Catch::Contains("fix:"));
  c.scheme.words["mix-order"] = "pre-first";
  c.scheme.counts["mix-post-layers"] = 5;
  CHECK_THROWS_WITH(c.validate(), Catch::Contains("--mix-post-layers 5 is outside 0..4"));
  c.scheme.counts["mix-post-layers"] = 1;
  CHECK_NOTHROW(c.validate());
  nlohmann::ordered_json j;
  find_placement("mix").config_fields(c, j);
  CHECK(j["mix_post_layers"] == 1);
  CHECK(j["mix_order"] == "pre-first");
  ModelConfig r = small_config("rezero", 3);
  j = nlohmann::ordered_json::object();
  find_placement("rezero").config_fields(r, j);
  CHECK(j["rezero_alpha"] == 0.0);  // the default when --rezero-alpha is not given
}
