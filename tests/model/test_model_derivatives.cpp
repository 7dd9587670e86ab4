// test_model_derivatives.cpp — the test matrix every placement goes through, automatically (it loops over
// placements()): for each placement × norm kind × activation × causal mask × edge sizes,
//   every block Jacobian (and the head's) vs finite differences, J·v vs JVP, uᵀJ vs VJP (stacked too);
//   every parameter gradient and the input gradient of the whole network vs finite differences;
//   ||dL/dx_l|| from the backward pass vs ||P_lᵀ g|| from the explicit product of Jacobians.
#include "derivative_checks.hpp"
#include "gradflow/run/context.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/model/model.hpp"
#include "gradflow/model/placement.hpp"

using namespace gradflow;
using namespace gradflow::test;

namespace {

struct Case {
  std::string placement;
  NormKind norm;
  Activation act;
  bool causal;
  Index layers, n, d, h, dff;
  double residual_scale;
  FeedForwardKind ffn = FeedForwardKind::Mlp;
  bool bias = true, qkv_bias = false, shared_norm = false;
  // the decoder blocks' attention: K key/value heads (0: h), head width (0: d/h), RoPE's rotated fraction (0: none),
  // QK-norm, soft-cap, logit scale S (0: the head width)
  Index kv_heads = 0, head_dim = 0;
  double rotary_fraction = 0;
  QkNorm qk_norm = QkNorm::None;
  double softcap = 0, attn_scale = 0;
  std::string name() const {
    return placement + "/" + to_string(norm) + "/" + to_string(act) + (causal ? "/causal" : "") + " L=" +
           std::to_string(layers) + " n=" + std::to_string(n) + " d=" + std::to_string(d) + " h=" + std::to_string(h) +
           " dff=" + std::to_string(dff) + " lambda=" + std::to_string(residual_scale) + " ffn=" + to_string(ffn) +
           (bias ? "" : qkv_bias ? " qkv-bias only" : " no bias") + (shared_norm ? " shared norm" : "") +
           (kv_heads ? " K=" + std::to_string(kv_heads) : "") + (head_dim ? " e=" + std::to_string(head_dim) : "") +
           (rotary_fraction > 0 ? " rope " + std::to_string(rotary_fraction) : "") +
           (qk_norm != QkNorm::None ? " qk-norm " + to_string(qk_norm) : "") +
           (softcap > 0 ? " cap " + std::to_string(softcap) : "") + (attn_scale > 0 ? " S " + std::to_string(attn_scale) : "");
  }
};

std::vector<Case> cases() {
  std::vector<Case> v;
  for (const auto& p : placements()) {
    // the full cross product on a small model ...
    for (NormKind nk : {NormKind::LayerNorm, NormKind::RMSNorm, NormKind::DyT})
      for (Activation a : {Activation::Relu, Activation::Gelu})
        for (bool causal : {false, true}) v.push_back({p->name(), nk, a, causal, 2, 3, 6, 2, 10, 1.0});
    // ... and the edge sizes: one head, one token, d_ff != 4d, a residual scale
    v.push_back({p->name(), NormKind::LayerNorm, Activation::Gelu, false, 3, 4, 4, 1, 7, 0.7});
    v.push_back({p->name(), NormKind::LayerNorm, Activation::Relu, true, 2, 1, 6, 3, 5, 1.0});
    // GPT-2's activation (gelu_new), causal as GPT-2 is
    v.push_back({p->name(), NormKind::LayerNorm, Activation::GeluTanh, true, 2, 3, 6, 2, 10, 1.0});
    // the decoder blocks' feed-forward (SwiGLU: Llama; GeGLU: Gemma) and linear layers without biases (Qwen2: q, k, v
    // keep theirs)
    v.push_back({p->name(), NormKind::RMSNorm, Activation::Relu, true, 2, 3, 6, 2, 10, 1.0, FeedForwardKind::SwiGLU,
                 false, true});
    v.push_back({p->name(), NormKind::LayerNorm, Activation::Relu, false, 2, 3, 6, 2, 7, 1.0, FeedForwardKind::GeGLU,
                 false, false});
    // the decoder blocks' attention: grouped-query heads of their own width, RoPE (partial, then whole), QK-norm per
    // head or over the projection, a soft-cap and a logit scale (NormFormer's head gains need e = d/h; HybridNorm
    // normalizes Q, K, V already)
    const bool own_width = p->name() != "normformer", qk = p->name().rfind("hybridnorm", 0) != 0;
    {  // h = 4 heads of width 4 over 2 key/value heads, RoPE on half of each head, QK-norm per head, cap, scale
      Case c{p->name(), NormKind::RMSNorm, Activation::Relu, true, 2, 3, 6, own_width ? 4 : 2, 10, 1.0,
             FeedForwardKind::SwiGLU, false};
      c.kv_heads = own_width ? 2 : 1;
      c.head_dim = own_width ? 4 : 0;
      c.rotary_fraction = own_width ? 0.5 : 0.0;  // normformer: e = d/h = 3 has no even rotary part
      c.qk_norm = qk ? QkNorm::Head : QkNorm::None;
      c.softcap = 1.5;
      c.attn_scale = 5.0;
      v.push_back(c);
    }
    {  // multi-query (K = 1), heads of width 2 wholly rotated, QK-norm over the projections
      Case c{p->name(), NormKind::LayerNorm, Activation::Gelu, false, 2, 4, 6, 2, 8, 1.0};
      c.kv_heads = 1;
      c.head_dim = own_width ? 2 : 0;
      c.rotary_fraction = own_width ? 1.0 : 0.0;
      c.qk_norm = qk ? QkNorm::Proj : QkNorm::None;
      v.push_back(c);
    }
    if (p->name() == "parallel")  // one norm feeding both branches (GPT-J, PaLM)
      v.push_back({p->name(), NormKind::LayerNorm, Activation::Gelu, true, 2, 3, 6, 2, 10, 0.8,
                   FeedForwardKind::Mlp, true, false, true});
  }
  return v;
}

// A model of this case with every parameter moved off its structured initial value (gains off 1, biases
// off 0, gates off 0), so no derivative hides behind a zero.
Model make_model(const Case& c) {
  ModelConfig cfg;
  cfg.placement = c.placement;
  cfg.norm = c.norm;
  cfg.activation = c.act;
  cfg.causal = c.causal;
  cfg.layers = c.layers;
  cfg.d_model = c.d;
  cfg.heads = c.h;
  cfg.d_ff = c.dff;
  cfg.residual_scale = c.residual_scale;
  cfg.ffn = c.ffn;
  cfg.bias = c.bias;
  cfg.qkv_bias = c.qkv_bias;
  cfg.shared_norm = c.shared_norm;
  cfg.kv_heads = c.kv_heads;
  cfg.head_dim = c.head_dim;
  cfg.rope = c.rotary_fraction > 0;
  if (cfg.rope) cfg.rotary_fraction = c.rotary_fraction;
  cfg.qk_norm = c.qk_norm;
  cfg.attn_softcap = c.softcap;
  cfg.attn_scale = c.attn_scale;
  cfg.scheme.numbers["rezero-alpha"] = 0.3;
  Model m(cfg);
  InitConfig init;
  init.seed = 5;
  initialize(m, init);
  for (auto& p : m.params().all()) p.value += 0.1 * random_normal(6, p.name, p.value.rows(), p.value.cols());
  return m;
}

double loss_of(const Model& m, const Mat& x, const Mat& g) { return g.cwiseProduct(m.forward(x).y).sum(); }

}  // namespace

TEST_CASE("model: block and head Jacobians vs finite differences and JVP/VJP, every placement", "[model][jacobian]") {
  for (const Case& c : cases()) {
    INFO(c.name());
    const Model m = make_model(c);
    const Mat x0 = random_mat(c.n, c.d, 100);
    const Trace t = m.forward(x0);
    for (Index l = 0; l < m.layers(); ++l) {
      const BlockCache& bc = t.blocks[static_cast<size_t>(l)];
      check_map(
          "block " + std::to_string(l),
          [&](const Mat& v) { BlockCache cc; return m.block_forward(l, v, cc); },
          [&](const Mat& v) { return m.block_jvp(l, bc, v); },
          [&](const Mat& u) { return m.block_vjp(l, bc, u, nullptr); },
          [&] { return m.block_jacobian(l, bc).to_dense(); }, t.x[static_cast<size_t>(l)]);
    }
    check_map(
        "head", [&](const Mat& v) { NormCache cc; return m.head_forward(v, cc); },
        [&](const Mat& v) { return m.head_jvp(t.head, v); }, [&](const Mat& u) { return m.head_vjp(t.head, u, nullptr); },
        [&] { return m.head_jacobian(t.head, c.n).to_dense(); }, t.x.back());
  }
}

TEST_CASE("model: input and parameter gradients vs finite differences, every placement", "[model][gradient][slow]") {
  for (const Case& c : cases()) {
    INFO(c.name());
    Model m = make_model(c);
    const Mat x0 = random_mat(c.n, c.d, 101), g = random_mat(c.n, c.d, 102);
    const Trace t = m.forward(x0);
    ParamGrads grads(m.params());
    const Mat dx0 = m.backward(t, g, &grads);
    const Mat fd_x = unflat(fd_jacobian([&](const Mat& v) { return Mat::Constant(1, 1, loss_of(m, v, g)); }, x0).row(0),
                            c.n, c.d);
    INFO("input gradient rel err " << rel_err(dx0, fd_x));
    CHECK(rel_err(dx0, fd_x) <= kFdTol);
    for (size_t i = 0; i < m.params().size(); ++i) {
      const int idx = static_cast<int>(i);
      Mat& P = m.params()[idx];
      const Mat saved = P;
      // central differences entry by entry, as fd_jacobian takes them, but moving the one entry in place: assigning
      // the whole parameter for every evaluation made this test quadratic in a parameter's size (115 s of the
      // Release suite, 455 s under AddressSanitizer; now 8.5 s and 268 s)
      Mat fd(saved.rows(), saved.cols());
      for (Index k = 0; k < saved.size(); ++k)
        fd.data()[k] = fd_diff<double>([&](double t) {
          P.data()[k] = saved.data()[k] + t;
          const double L = loss_of(m, x0, g);
          P.data()[k] = saved.data()[k];
          return L;
        });
      INFO("parameter " << m.params().all()[i].name << " rel err " << rel_err(grads[idx], fd));
      if (m.params().all()[i].name.find("self_attn.k_norm.bias") != std::string::npos && !m.config().rope) {
        // the key norm's bias (HybridNorm, QK-norm): exactly 0, as β_k adds q_i·β_k/√e to every score of query i
        // alike and the softmax cancels it; so both sides are rounding (central differences of a constant). RoPE
        // rotates β_k by each key's position, so with it the gradient is not 0.
        CHECK(grads[idx].norm() <= kZeroGradTol);
        CHECK(fd.norm() <= kFdZeroTol);
        continue;
      }
      CHECK(rel_err(grads[idx], fd) <= kFdTol);
    }
  }
}

TEST_CASE("analysis: ||dL/dx_l|| equals ||P_l^T g|| from the explicit product", "[model][product]") {
  for (const Case& c : cases()) {
    INFO(c.name());
    const Model m = make_model(c);
    AnalysisOptions opts;
    AnalysisContext ctx(m, random_mat(c.n, c.d, 103), opts, make_backend(BackendKind::Cpu), nullptr, 7);
    const Vec g = flat(ctx.dL_dy);
    int visited = 0;
    ctx.for_each_product([&](Index l, const Mat& B, const Mat& P) {
      INFO("layer " << l);
      const double want = ctx.dx[static_cast<size_t>(l)].norm();
      const double got = (P.transpose() * g).norm();
      CHECK(std::abs(got - want) <= kProductTol * want);
      // and B_l is the Jacobian `gradflow jacobian --from l --to l+1` writes
      CHECK(rel_err(ctx.jacobian_between(l, l + 1), B) == 0.0);
      ++visited;
    });
    CHECK(visited == m.layers());
    CHECK(rel_err(ctx.jacobian_between(0, m.layers()), [&] {
            Mat P0;
            ctx.for_each_product([&](Index l, const Mat&, const Mat& P) { if (l == 0) P0 = P; });
            return P0;
          }()) <= kCrossTol);
  }
}

TEST_CASE("model: parameter names and shapes follow PyTorch's nn.TransformerEncoder", "[model][names]") {
  ModelConfig cfg;
  cfg.layers = 2;
  cfg.d_model = 8;
  cfg.heads = 2;
  cfg.placement = "pre";
  const Model m(cfg);
  const std::vector<std::pair<std::string, std::vector<int64_t>>> want = {
      {"layers.0.self_attn.in_proj_weight", {24, 8}}, {"layers.0.self_attn.in_proj_bias", {24}},
      {"layers.0.self_attn.out_proj.weight", {8, 8}}, {"layers.0.self_attn.out_proj.bias", {8}},
      {"layers.0.linear1.weight", {32, 8}},           {"layers.0.linear1.bias", {32}},
      {"layers.0.linear2.weight", {8, 32}},           {"layers.0.linear2.bias", {8}},
      {"layers.0.norm1.weight", {8}},                 {"layers.0.norm1.bias", {8}},
      {"layers.0.norm2.weight", {8}},                 {"layers.0.norm2.bias", {8}}};
  for (size_t i = 0; i < want.size(); ++i) {
    CHECK(m.params().all()[i].name == want[i].first);
    CHECK(m.params().all()[i].shape == want[i].second);
  }
  CHECK(m.params().all().size() == 2 * want.size() + 2);
  CHECK(m.params().all().back().name == "norm.bias");
}

TEST_CASE("model: a gated feed-forward without biases, and the parallel residual's names", "[model][names]") {
  ModelConfig cfg;
  cfg.layers = 1;
  cfg.d_model = 8;
  cfg.heads = 2;
  cfg.d_ff = 12;
  cfg.placement = "parallel";
  cfg.ffn = FeedForwardKind::SwiGLU;
  cfg.bias = false;
  cfg.qkv_bias = true;
  cfg.norm = NormKind::RMSNorm;
  const std::vector<std::pair<std::string, std::vector<int64_t>>> want = {
      {"layers.0.self_attn.in_proj_weight", {24, 8}}, {"layers.0.self_attn.in_proj_bias", {24}},
      {"layers.0.self_attn.out_proj.weight", {8, 8}}, {"layers.0.linear1.weight", {12, 8}},
      {"layers.0.linear2.weight", {8, 12}},           {"layers.0.linear3.weight", {12, 8}},
      {"layers.0.norm1.weight", {8}},                 {"layers.0.norm2.weight", {8}},
      {"norm.weight", {8}}};
  const Model m(cfg);
  REQUIRE(m.params().all().size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CHECK(m.params().all()[i].name == want[i].first);
    CHECK(m.params().all()[i].shape == want[i].second);
  }
  CHECK(m.params().all()[5].role == ParamRole::Linear3Weight);
  // --shared-norm: one norm for both branches; its gradient gathers both branches' (the FD checks above cover it)
  cfg.shared_norm = true;
  const Model shared(cfg);
  CHECK(shared.params().all().size() == want.size() - 1);
  CHECK(!shared.params().has("layers.0.norm2.weight"));
  CHECK(shared.block(0)[0].pre->weight == shared.block(0)[1].pre->weight);
  // the options refused where they mean nothing
  cfg.placement = "pre";
  CHECK_THROWS_WITH(Model(cfg), Catch::Contains("--shared-norm is an option of --placement parallel"));
  cfg.shared_norm = false;
  cfg.bias = true;
  CHECK_THROWS_WITH(Model(cfg), Catch::Contains("fix: add --bias off"));
}

TEST_CASE("model: parameter JVP vs finite differences and the VJP, every placement", "[model][param-jvp]") {
  // J_x0 dx0 + J_θ dθ (Model::jvp_with_params) against central differences of y(θ + h·dθ, x0 + h·dx0), against the
  // input JVP when dθ = 0, and per parameter against the VJP: <u, J_θi dθ_i> = <(J_θiᵀ u), dθ_i> = <dL/dθ_i, dθ_i>.
  for (const Case& c : cases()) {
    INFO(c.name());
    Model m = make_model(c);
    const Mat x0 = random_mat(c.n, c.d, 103), dx0 = random_mat(c.n, c.d, 104), u = random_mat(c.n, c.d, 105);
    const Trace t = m.forward(x0);
    ParamGrads dtheta(m.params()), zero(m.params()), grads(m.params());
    for (size_t i = 0; i < m.params().size(); ++i) {
      const Mat& p = m.params()[static_cast<int>(i)];
      dtheta[static_cast<int>(i)] = random_normal(107, m.params().all()[i].name, p.rows(), p.cols());
    }
    const Mat tangent = m.jvp_with_params(t, dx0, dtheta);
    // finite differences along (dθ, dx0)
    const auto shifted = [&](double h) {
      Model mh = m;
      for (size_t i = 0; i < m.params().size(); ++i) mh.params()[static_cast<int>(i)] += h * dtheta[static_cast<int>(i)];
      return mh.forward(x0 + h * dx0).y;
    };
    // four-point: central differences erred up to 4.5e-7 here (8 of 255 cases above kFdTol/10), four-point 1.5e-11
    const Mat fd = fd_diff<Mat>(shifted, Stencil::FourPoint);
    INFO("finite differences rel err " << rel_err(tangent, fd));
    CHECK(rel_err(tangent, fd) <= kFdTol);
    CHECK(rel_err(m.jvp_with_params(t, dx0, zero), m.jvp_from(t, 0, m.initial_state(dx0))) <= kCrossTol);
    // per parameter: the JVP of dθ_i alone against the parameter gradient of L = <u, y>
    m.backward(t, u, &grads);
    const Mat none = Mat::Zero(c.n, c.d);
    for (size_t i = 0; i < m.params().size(); ++i) {
      const int idx = static_cast<int>(i);
      ParamGrads one(m.params());
      one[idx] = dtheta[idx];
      const double jvp_side = u.cwiseProduct(m.jvp_with_params(t, none, one)).sum();
      const double vjp_side = grads[idx].cwiseProduct(dtheta[idx]).sum();
      INFO("parameter " << m.params().all()[i].name << ": <u, J dθ> " << jvp_side << " vs <J^T u, dθ> " << vjp_side);
      CHECK(std::abs(jvp_side - vjp_side) <= kCrossTol * std::max(1.0, std::abs(vjp_side)));
    }
  }
}
