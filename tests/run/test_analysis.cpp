// test_analysis.cpp — the analyze pipeline: report contract, rank threshold, determinism, memory refusal,
// option parsing, initialization distributions.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "gradflow/run/analyze.hpp"
#include "gradflow/run/engine.hpp"
#include "gradflow/run/context.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/linalg/svd.hpp"
#include "gradflow/linalg/top_singular.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/model/placement.hpp"
#include "gradflow/run/analysis.hpp"
#include "gradflow/backend/backend.hpp"
#include "experiments/runner_fixtures.hpp"
#include "small_model.hpp"
#include "tolerances.hpp"

using namespace gradflow;

namespace {
RunConfig small(const std::string& placement, Index layers = 3) {
  RunConfig rc;
  rc.model.placement = placement;
  rc.model.layers = layers;
  rc.model.d_model = 8;
  rc.model.heads = 2;
  rc.analysis.seq_len = 4;
  rc.analysis.progress = false;
  rc.init.seed = 3;
  return rc;
}
}  // namespace

TEST_CASE("analyze: the report keeps the contract of issue 2", "[analysis]") {
  for (const char* p : {"post", "pre"}) {
    const auto r = analyze(small(p));
    INFO(p);
    REQUIRE(r["layers"].size() == 3);
    for (const auto& l : r["layers"]) {
      for (const char* k : {"grad_norm", "activation_rms"}) CHECK(l[k].is_number());
      for (const char* k : {"spectral_norm", "frobenius_norm", "minus_identity_spectral_norm"})
        CHECK(l["block_jacobian"][k].is_number());
      for (const char* k : {"spectral_norm", "frobenius_norm", "min_singular_value", "numerical_rank"})
        CHECK(l["product_jacobian"][k].is_number());
      for (const char* k : {"self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                            "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
                            "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"})
        CHECK(l["param_grad_norms"][k].is_number());
    }
    CHECK(r["output_grad_norm"].is_number());
    CHECK(r["summary"]["bottom_to_top_grad_ratio"].get<double>() ==
          Approx(r["layers"][0]["grad_norm"].get<double>() / r["layers"][2]["grad_norm"].get<double>())
              .epsilon(test::kClosedFormTol));
    CHECK(r["config"]["seed"] == 3);
    CHECK(r["config"]["placement"] == p);
  }
}

namespace {
// P_l's singular values divided by the largest, ascending (needs --spectrum)
std::vector<double> relative_spectrum(const nlohmann::ordered_json& layer) {
  std::vector<double> s = layer["product_jacobian"]["spectrum"]["singular_values"].get<std::vector<double>>();
  std::sort(s.begin(), s.end());
  const double top = s.back();
  for (double& v : s) v /= top;
  return s;
}
}  // namespace

TEST_CASE("analyze: numerical rank: LayerNorms in series multiply their eps-attenuated scale directions",
          "[analysis][rank]") {
  // n = 4 tokens, d = 8, N = 32. Each LayerNorm maps a token's mean direction exactly to 0 and attenuates its
  // scale direction by delta = eps/(var + eps) ~ 1e-5; k LayerNorms in series attenuate it by ~delta^k
  // (docs/math.md §9). Thresholds below sit orders of magnitude from the measured values.
  const Index n = 4;
  SECTION("Post-LN: two LayerNorms per block, so delta^2 in B_l and below rounding in longer products") {
    auto rc = small("post");
    rc.analysis.spectrum = true;
    const auto r = analyze(rc);
    const auto& layers = r["layers"];
    REQUIRE(layers.size() == 3);
    for (size_t l = 0; l + 1 < layers.size(); ++l) {
      INFO("layer " << l);
      CHECK(layers[l]["product_jacobian"]["numerical_rank"] == 32 - 2 * n);
      const auto s = relative_spectrum(layers[l]);
      CHECK(s[2 * n - 1] < test::kZeroSingularTol);  // means and scales: rounding level (delta^4 ~ 1e-20)
      CHECK(s[2 * n] > test::kUnattenuatedFloor);
    }
    const auto s = relative_spectrum(layers[2]);  // P_2 = B_2: one block, two LayerNorms in series
    CHECK(s[n - 1] < test::kZeroSingularTol);  // the mean directions: exact zeros up to rounding
    CHECK(s[n] > test::kLnDeltaSquaredFloor);  // the scale directions: delta^2, far above rounding ...
    CHECK(s[2 * n - 1] < test::kLnDeltaFloor);  // ... and far below one LayerNorm's delta
    CHECK(s[2 * n] > test::kUnattenuatedFloor);
  }
  SECTION("Pre-LN with the final norm: the residual bypasses the inner norms, only the final one is in series") {
    auto rc = small("pre");
    rc.analysis.spectrum = true;
    const auto r = analyze(rc);
    for (const auto& layer : r["layers"]) {
      CHECK(layer["product_jacobian"]["numerical_rank"] == 32 - n);
      const auto s = relative_spectrum(layer);
      CHECK(s[n - 1] < test::kZeroSingularTol);
      CHECK(s[n] > test::kLnDeltaFloor);  // delta ~ 1e-5 (measured 2e-6 .. 1e-5)
      CHECK(s[2 * n - 1] < test::kUnattenuatedFloor);
      CHECK(s[2 * n] > test::kUnattenuatedFloor);
    }
  }
  SECTION("Pre-LN without a final norm: full rank") {
    auto rc = small("pre");
    rc.model.final_norm = false;
    const auto r = analyze(rc);
    for (const auto& l : r["layers"]) CHECK(l["product_jacobian"]["numerical_rank"] == 32);
  }
}

TEST_CASE("summarize_spectrum: threshold is kRankRtol relative to sigma_max", "[analysis][rank]") {
  Vec s(5);
  s << 2.0, 1.0, 3e-10, 1e-10, 1e-17;  // 2e-10 is the threshold
  const auto sum = summarize_spectrum(s, 1.0);
  CHECK(sum.numerical_rank == 3);
  CHECK(sum.min_singular_value == 3e-10);
  CHECK(sum.spectral_norm == 2.0);
}

TEST_CASE("spectral_norm by Lanczos equals the SVD's sigma_max", "[analysis][linalg]") {
  const Mat A = random_normal(9, "A", 60, 60);
  CHECK(spectral_norm(A) == Approx(singular_values(A)(0)).epsilon(test::kSpectralNormTol));
  CHECK(spectral_norm(Mat::Identity(30, 30)) == Approx(1.0).epsilon(test::kClosedFormChainTol));
  CHECK(spectral_norm(Mat::Zero(10, 10)) == 0.0);
}

TEST_CASE("analyze: the same seed gives identical numbers, another seed different ones", "[analysis][determinism]") {
  auto a = analyze(small("post")), b = analyze(small("post"));
  for (auto* r : {&a, &b})
    for (const char* k : {"elapsed_seconds", "timing_seconds"}) r->erase(k);
  CHECK(a == b);
  auto rc = small("post");
  rc.init.seed = 4;
  CHECK(analyze(rc)["layers"][0]["grad_norm"] != a["layers"][0]["grad_norm"]);
}

TEST_CASE("analyze: an explicit run too large for memory is refused before allocating", "[analysis][errors]") {
  auto rc = small("post");
  rc.model.d_model = 1024;
  rc.model.heads = 8;
  rc.analysis.seq_len = 4096;
  rc.analysis.engine_request = EngineRequest::Explicit;
  try {
    analyze(rc);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.exit_code() == 2);
    CHECK(std::string(e.what()).find("--max-memory") != std::string::npos);
    CHECK(std::string(e.what()).find("TiB") != std::string::npos);
  }
  rc.analysis.engine_request = EngineRequest::GradientsOnly;  // gradients only: no (N, N) matrices, so no refusal
  CHECK_NOTHROW(choose_engine(rc.model, rc.analysis, RunBackend(rc.analysis.backend)));
}

TEST_CASE("option parsing: init scale and memory sizes", "[analysis][options]") {
  CHECK(parse_init_scale("inv-sqrt-2L", 8) == Approx(0.25).epsilon(test::kClosedFormTol));
  CHECK(parse_init_scale("0.5", 8) == 0.5);
  CHECK_THROWS_AS(parse_init_scale("nope", 8), Error);
  CHECK_THROWS_AS(parse_init_scale("-1", 8), Error);
  CHECK(parse_memory_size("512M", "--max-memory") == 512.0 * 1024 * 1024);
  CHECK(parse_memory_size("8G", "--max-memory") == 8.0 * 1024 * 1024 * 1024);
  CHECK_THROWS_AS(parse_memory_size("8Q", "--max-memory"), Error);
}

TEST_CASE("init: torch defaults in distribution, gpt2 scaling, init-scale", "[analysis][init]") {
  ModelConfig cfg;
  cfg.layers = 2;
  cfg.d_model = 64;
  cfg.heads = 4;
  Model m(cfg);
  InitConfig init;
  init.seed = 1;
  initialize(m, init);
  const auto& P = m.params();
  const double d = 64, dff = 256;
  // U(-b, b): max |w| just below b, variance b²/3
  auto check_uniform = [](const Mat& w, double b) {
    CHECK(w.cwiseAbs().maxCoeff() <= b);
    CHECK(w.cwiseAbs().maxCoeff() > 0.95 * b);
    const double var = w.squaredNorm() / double(w.size());
    CHECK(var == Approx(b * b / 3).epsilon(test::kInitMomentTol));
  };
  check_uniform(P.at("layers.0.self_attn.in_proj_weight"), std::sqrt(6.0 / (d + 3 * d)));
  check_uniform(P.at("layers.0.self_attn.out_proj.weight"), 1 / std::sqrt(d));
  check_uniform(P.at("layers.1.linear1.weight"), 1 / std::sqrt(d));
  check_uniform(P.at("layers.1.linear2.weight"), 1 / std::sqrt(dff));
  CHECK(P.at("layers.0.self_attn.in_proj_bias").norm() == 0.0);
  CHECK(P.at("layers.0.self_attn.out_proj.bias").norm() == 0.0);
  CHECK(P.at("layers.0.norm1.weight") == Mat::Ones(1, 64));
  CHECK(P.at("layers.0.linear1.weight") != P.at("layers.1.linear1.weight"));

  Model g(cfg);
  init.scheme = "gpt2";
  init.scale = 0.5;
  initialize(g, init);
  const Mat& w2 = g.params().at("layers.0.linear2.weight");
  const double sd = std::sqrt(w2.squaredNorm() / double(w2.size()));
  CHECK(sd == Approx(0.02 / std::sqrt(4.0) * 0.5).epsilon(test::kInitMomentTol));
  const Mat& w1 = g.params().at("layers.0.linear1.weight");
  CHECK(std::sqrt(w1.squaredNorm() / double(w1.size())) == Approx(0.02).epsilon(test::kInitMomentTol));
  // hf-normal (the decoder families' _init_weights): every weight matrix N(0, 0.02), no depth factor, biases 0
  Model h(cfg);
  init.scheme = "hf-normal";
  init.scale = 1.0;
  initialize(h, init);
  for (const char* name : {"layers.0.self_attn.in_proj_weight", "layers.0.self_attn.out_proj.weight",
                           "layers.1.linear1.weight", "layers.1.linear2.weight"}) {
    const Mat& w = h.params().at(name);
    INFO(name);
    CHECK(std::abs(w.mean()) < test::kRngMaxZ * kHfInitializerRange / std::sqrt(double(w.size())));  // mean 0
    CHECK(std::sqrt(w.squaredNorm() / double(w.size())) == Approx(kHfInitializerRange).epsilon(test::kInitMomentTol));
  }
  CHECK(h.params().at("layers.0.self_attn.in_proj_bias").norm() == 0.0);
  CHECK(h.params().at("layers.1.linear1.bias").norm() == 0.0);
  CHECK(h.params().at("layers.0.norm1.weight") == Mat::Ones(1, 64));
  init.scheme = "bogus";
  CHECK_THROWS_AS(initialize(g, init), Error);
}

TEST_CASE("analysis context: parameter-gradient norms streamed block by block equal those of the kept gradients",
          "[analysis]") {
  // opts.keep_param_grads = false (what `analyze` uses) frees each block's gradients once their norms are taken;
  // the numbers must not change, bit for bit (same accumulation order), whatever the placement.
  for (const char* p : {"post", "pre", "sandwich", "rezero", "admin", "b2t", "normformer", "deepnorm"}) {
    INFO(p);
    RunConfig rc = small(p);
    Model model(rc.model);
    initialize(model, rc.init);
    const Mat x0 = random_normal(1, "input", rc.analysis.seq_len, rc.model.d_model);
    AnalysisOptions kept = rc.analysis, streamed = rc.analysis;
    kept.keep_param_grads = true;
    streamed.keep_param_grads = false;
    const std::shared_ptr<const Backend> cpu = make_backend(BackendKind::Cpu);
    const AnalysisContext a(model, x0, kept, cpu, nullptr, 3), b(model, x0, streamed, cpu, nullptr, 3);
    REQUIRE(a.param_grad_norms.size() == model.params().size());
    for (size_t i = 0; i < model.params().size(); ++i) {  // the grouping the streaming relies on
      const std::string& name = model.params().all()[i].name;
      const Index l = model.block_of_param(static_cast<int>(i));
      if (l >= 0) CHECK(name.rfind(Model::layer_prefix(l), 0) == 0);
      else CHECK(name.rfind("layers.", 0) != 0);
    }
    REQUIRE(b.param_grad_norms == a.param_grad_norms);
    for (size_t i = 0; i < a.param_grad_norms.size(); ++i) {
      CHECK(a.param_grad_norms[i] == frobenius_norm(a.grads[static_cast<int>(i)]));
      CHECK(b.grads[static_cast<int>(i)].size() == 0);  // nothing kept
    }
    for (size_t l = 0; l < a.dx.size(); ++l) CHECK(b.dx[l] == a.dx[l]);
  }
}

TEST_CASE("analyze: ||B_l - I||_2 and ||B_l - I||_F/||I||_F are the explicit B_l's, 0 where the block is the identity",
          "[analysis]") {
  for (const char* p : {"pre", "lns", "sandwich", "rezero"}) {
    INFO(p);
    Model model(test::small_model(p, 3));  // d = 8, 2 heads: B_l is 32 x 32 with 4 tokens
    InitConfig init;
    init.seed = 5;
    initialize(model, init);
    AnalysisOptions opts;
    opts.seq_len = 4;
    opts.progress = false;
    const AnalysisContext ctx(model, random_normal(5, "input", 4, 8), opts, make_backend(BackendKind::Cpu), nullptr, 5);
    const Json body = run_analyses(ctx);
    const double N = 32;
    ctx.for_each_product([&](Index l, const Mat& B, const Mat&) {
      Mat AmI = B;
      AmI.diagonal().array() -= 1.0;
      const Json& b = body["layers"][static_cast<size_t>(l)]["block_jacobian"];
      const double spec = b["minus_identity_spectral_norm"], rel = b["minus_identity_relative_frobenius"];
      CHECK(spec == Approx(spectral_norm(AmI)).epsilon(test::kCrossTol).margin(test::kCrossTol));
      CHECK(rel == Approx(frobenius_norm(AmI) / std::sqrt(N)).epsilon(test::kCrossTol).margin(test::kCrossTol));
      CHECK(rel * std::sqrt(N) >= spec * (1 - test::kCrossTol));  // ||A||_F >= ||A||_2
      // ReZero at init (alpha = 0): every block below the top (which holds the final norm) is exactly I
      if (std::string(p) == "rezero" && l < 2) CHECK(rel == 0.0);
    });
  }
}

TEST_CASE("analyze --gradients-only: weights held per block give the resident run's report, bit for bit",
          "[analysis]") {
  // analyze() holds a seeded model's weight matrices one block at a time in gradients-only mode (block_weights.hpp);
  // the report must be the one of the model held whole, whatever the placement (two streams, parallel branches,
  // learnable skips and gates included)
  for (const auto& pl : placements()) {
    INFO(pl->name());
    RunConfig rc = small(pl->name());
    rc.analysis.engine_request = EngineRequest::GradientsOnly;
    CHECK(weights_per_block(rc.model, rc.analysis, Engine::GradientsOnly, false) == !pl->profiles());
    rc.analysis.weights_per_block = false;
    const std::string whole = test::without_timing(analyze(rc));
    rc.analysis.weights_per_block = true;
    CHECK(test::without_timing(analyze(rc)) == whole);
  }
  RunConfig rc = small("pre");  // a decoder block: gated feed-forward, grouped heads, rotary positions; gpt2 init
  rc.model.ffn = FeedForwardKind::SwiGLU;
  rc.model.heads = 4;
  rc.model.kv_heads = 2;
  rc.model.rope = true;
  rc.model.causal = true;
  rc.init.scheme = "gpt2";
  rc.analysis.engine_request = EngineRequest::GradientsOnly;
  rc.analysis.weights_per_block = false;
  const std::string whole = test::without_timing(analyze(rc));
  rc.analysis.weights_per_block = true;
  CHECK(test::without_timing(analyze(rc)) == whole);
}

TEST_CASE("analyze: weights are held per block only where nothing reads them after the pass", "[analysis]") {
  RunConfig rc = small("post");
  const AnalysisOptions& o = rc.analysis;
  CHECK(weights_per_block(rc.model, o, Engine::GradientsOnly, false));
  CHECK_FALSE(weights_per_block(rc.model, o, Engine::GradientsOnly, true));  // a checkpoint's weights
  for (Engine e : {Engine::Explicit, Engine::MatrixFree, Engine::Streamed})  // their products revisit every block
    CHECK_FALSE(weights_per_block(rc.model, o, e, false));
  rc.analysis.sensitivity_probes = 2;  // perturbed forward passes of a copy of the model
  CHECK_FALSE(weights_per_block(rc.model, rc.analysis, Engine::GradientsOnly, false));
  rc.analysis.sensitivity_probes = 0;
  rc.model.placement = "admin";  // ω is profiled by a forward pass of the whole initialized model
  CHECK_FALSE(weights_per_block(rc.model, rc.analysis, Engine::GradientsOnly, false));
  // with --sensitivity-probes the gradients-only report is the resident model's (nothing held per block to compare)
  RunConfig s = small("pre");
  s.analysis.engine_request = EngineRequest::GradientsOnly;
  s.analysis.sensitivity_probes = 2;
  CHECK_NOTHROW(analyze(s));
}
