// test_engine.cpp — --mode auto picks explicit exactly up to the memory budget and matrix-free above it
// (src/run/engine.cpp); an engine above the budget is refused before allocating; --mode and --spectral-layers
// parsing; the whole `analyze` in matrix-free mode agrees with explicit mode on a small model, and in streamed mode
// equals it exactly (kCrossTol).
#include <catch2/catch.hpp>

#include <omp.h>

#include <cmath>
#include <string>
#include <vector>

#include "gradflow/run/analyze.hpp"
#include "gradflow/run/context.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/run/engine.hpp"
#include "experiments/runner_fixtures.hpp"
#include "small_model.hpp"
#include "tolerances.hpp"

using namespace gradflow;
using namespace gradflow::test;

TEST_CASE("auto chooses explicit up to the budget, matrix-free one byte above", "[engine]") {
  const ModelConfig cfg = small_model("post");
  AnalysisOptions o;
  o.seq_len = 64;  // N = 512: explicit (~15 MB) far above matrix-free (~0.5 MB), so one byte less still fits the latter
  const double need = explicit_memory_estimate(cfg, o.seq_len);
  o.max_memory_bytes = need;
  EngineChoice c = choose_engine(cfg, o, RunBackend(o.backend));
  REQUIRE(c.engine == Engine::Explicit);
  REQUIRE(c.reason.find("auto") != std::string::npos);
  o.max_memory_bytes = need - 1;
  c = choose_engine(cfg, o, RunBackend(o.backend));
  REQUIRE(c.engine == Engine::MatrixFree);
  REQUIRE(c.explicit_bytes == need);
  REQUIRE(c.budget_bytes == need - 1);
  AnalysisOptions g;
  g.engine_request = EngineRequest::GradientsOnly;
  REQUIRE(choose_engine(cfg, g, RunBackend(g.backend)).engine == Engine::GradientsOnly);
}

TEST_CASE("explicit_concurrent_layers: two layers at once, more only on more threads and within --max-memory",
          "[engine]") {
  const ModelConfig cfg = small_model("post");
  const Index n = 64;
  const double N = static_cast<double>(n * cfg.d_model), each = 2.0 * N * N * sizeof(double);
  const double need = explicit_memory_estimate(cfg, n);
  REQUIRE(explicit_concurrent_layers(cfg, n, need, 1) == 1);
  REQUIRE(explicit_concurrent_layers(cfg, n, 1.0, 2) == kExplicitConcurrentLayers);  // what the estimate counts
  REQUIRE(explicit_concurrent_layers(cfg, n, need, 8) == kExplicitConcurrentLayers);
  REQUIRE(explicit_concurrent_layers(cfg, n, need + 3 * each, 8) == kExplicitConcurrentLayers + 3);
  REQUIRE(explicit_concurrent_layers(cfg, n, need + 3 * each - 1, 8) == kExplicitConcurrentLayers + 2);
  REQUIRE(explicit_concurrent_layers(cfg, n, 1e15, 8) == 8);  // never more than the threads
}

TEST_CASE("analyze explicit: the same report whatever the layers at once (1, 2 or 5 threads)", "[engine]") {
  RunConfig rc;
  rc.model = small_model("post", 6);  // 6 layers: batches of 5 and 1 on 5 threads
  rc.analysis.seq_len = 8;
  rc.analysis.progress = false;
  rc.analysis.spectrum = true;
  rc.analysis.engine_request = EngineRequest::Explicit;
  const int threads = omp_get_max_threads();
  std::vector<std::string> reports;
  for (int t : {1, 2, 5}) {
    omp_set_num_threads(t);
    reports.push_back(without_timing(analyze(rc)));
  }
  omp_set_num_threads(threads);
  REQUIRE(reports[0] == reports[1]);
  REQUIRE(reports[0] == reports[2]);
}

TEST_CASE("mode: --mode explicit above the budget is refused with the size, matrix-free is not", "[engine]") {
  RunConfig rc;
  rc.model = small_model("post");
  rc.analysis.seq_len = 64;  // N = 512: explicit (~15 MB) far above the streaming modes (~0.5 MB)
  rc.analysis.max_memory_bytes = explicit_memory_estimate(rc.model, 64) / 2;
  REQUIRE(streaming_memory_estimate(rc.model, 64, rc.analysis.hutchinson_probes) < rc.analysis.max_memory_bytes);
  rc.analysis.engine_request = EngineRequest::Explicit;
  try {
    choose_engine(rc.model, rc.analysis, RunBackend(rc.analysis.backend));
    FAIL("no refusal");
  } catch (const Error& e) {
    REQUIRE(e.kind() == ErrorKind::BadInput);
    REQUIRE(std::string(e.what()).find("needs about") != std::string::npos);
  }
  rc.analysis.engine_request = EngineRequest::MatrixFree;
  REQUIRE_NOTHROW(choose_engine(rc.model, rc.analysis, RunBackend(rc.analysis.backend)));
  rc.analysis.engine_request = EngineRequest::Auto;
  REQUIRE_NOTHROW(choose_engine(rc.model, rc.analysis, RunBackend(rc.analysis.backend)));
  REQUIRE_THROWS_AS(parse_engine_request("bogus", false), Error);
  REQUIRE(parse_engine_request("explicit", true) == EngineRequest::GradientsOnly);  // --gradients-only wins
}

TEST_CASE("mode: matrix-free and gradients-only above their own (streaming) estimate are refused", "[engine]") {
  RunConfig rc;
  rc.model = small_model("post");
  rc.analysis.seq_len = 6;
  rc.analysis.engine_request = EngineRequest::MatrixFree;
  const double need = streaming_memory_estimate(rc.model, 6, rc.analysis.hutchinson_probes);
  // quadratic in n once the attention matrices dominate (n >> d)
  const double s1 = streaming_memory_estimate(rc.model, 1000, 0), s2 = streaming_memory_estimate(rc.model, 2000, 0);
  REQUIRE(s2 > 3.5 * s1);
  REQUIRE(s2 < 4.0 * s1);
  rc.analysis.max_memory_bytes = need;
  REQUIRE_NOTHROW(choose_engine(rc.model, rc.analysis, RunBackend(rc.analysis.backend)));
  rc.analysis.max_memory_bytes = need - 1;
  try {
    choose_engine(rc.model, rc.analysis, RunBackend(rc.analysis.backend));
    FAIL("no refusal");
  } catch (const Error& e) {
    REQUIRE(e.kind() == ErrorKind::BadInput);
    REQUIRE(std::string(e.what()).find("matrix-free mode") != std::string::npos);
    REQUIRE(std::string(e.what()).find("fix:") != std::string::npos);
  }
  rc.analysis.engine_request = EngineRequest::GradientsOnly;  // --gradients-only keeps the trace but no probes,
  // and one block's weights at a time
  rc.analysis.max_memory_bytes = streaming_memory(rc.model, 6, 0, true).total();
  REQUIRE(rc.analysis.max_memory_bytes < streaming_memory_estimate(rc.model, 6, 0));
  REQUIRE_NOTHROW(choose_engine(rc.model, rc.analysis, RunBackend(rc.analysis.backend)));
  rc.analysis.max_memory_bytes -= 1;
  REQUIRE_THROWS_AS(choose_engine(rc.model, rc.analysis, RunBackend(rc.analysis.backend)), Error);
}

TEST_CASE("options: --spectral-layers parses all, none, bottom, top and lists, rejects the rest", "[engine]") {
  using V = std::vector<Index>;
  REQUIRE(parse_spectral_layers("all", 3) == V{0, 1, 2});
  REQUIRE(parse_spectral_layers("none", 3).empty());
  REQUIRE(parse_spectral_layers("bottom", 3) == V{0});
  REQUIRE(parse_spectral_layers("top", 3) == V{2});
  REQUIRE(parse_spectral_layers("2,0,2", 3) == V{0, 2});
  for (const char* bad : {"3", "-1", "0,x", "", "1,,2", "0.5"}) {
    INFO(bad);
    REQUIRE_THROWS_AS(parse_spectral_layers(bad, 3), Error);
  }
}

TEST_CASE("analyze: matrix-free agrees with explicit on a small model and says how each number was had",
          "[engine]") {
  RunConfig rc;
  rc.model = small_model("post", 3);
  rc.analysis.seq_len = 4;
  rc.analysis.progress = false;
  rc.init.seed = 3;
  rc.analysis.engine_request = EngineRequest::Explicit;
  const auto ex = analyze(rc);
  rc.analysis.engine_request = EngineRequest::MatrixFree;
  rc.analysis.top_k = 2;
  const auto mf = analyze(rc);
  REQUIRE(ex["config"]["mode"] == "explicit");
  REQUIRE(mf["config"]["mode"] == "matrix-free");
  REQUIRE(mf["config"]["mode_reason"].get<std::string>().find("--mode matrix-free") != std::string::npos);
  for (size_t l = 0; l < 3; ++l) {
    const auto &a = ex["layers"][l], &b = mf["layers"][l];
    INFO("layer " << l);
    REQUIRE(a["grad_norm"].get<double>() == b["grad_norm"].get<double>());  // the same backward pass
    for (const char* grp : {"product_jacobian", "block_jacobian"}) {
      const double se = a[grp]["spectral_norm"], sm = b[grp]["spectral_norm"];
      CHECK(std::abs(se - sm) <= kLanczosTol * se);
      const double fe = a[grp]["frobenius_norm"], fm = b[grp]["frobenius_norm"], err = b[grp]["frobenius_std_error"];
      CHECK(std::abs(fe - fm) <= kHutchinsonMaxZ * err);
      CHECK(b[grp]["method"] == "lanczos+hutchinson");
      CHECK(b[grp]["lanczos"]["converged"] == true);
      CHECK(b[grp]["top_singular_values"].size() == 2);
    }
    const double me = a["block_jacobian"]["minus_identity_spectral_norm"];
    const double mm = b["block_jacobian"]["minus_identity_spectral_norm"];
    CHECK(std::abs(me - mm) <= kLanczosTol * me);
    CHECK(b["block_jacobian"]["methods"]["minus_identity_spectral_norm"] == "lanczos");
    CHECK(b["product_jacobian"]["min_singular_value"].is_null());
    CHECK(b["product_jacobian"]["numerical_rank"].is_null());
  }
}

TEST_CASE("analyze --mode streamed: the explicit report's Frobenius norms, exact, with method exact (streamed)",
          "[engine]") {
  for (const bool causal : {false, true}) {
    RunConfig rc;
    rc.model = small_model("pre", 3);  // pre: with its final norm
    rc.model.causal = causal;
    rc.analysis.seq_len = 4;
    rc.analysis.progress = false;
    rc.init.seed = 3;
    rc.analysis.engine_request = EngineRequest::Explicit;
    const auto ex = analyze(rc);
    rc.analysis.engine_request = EngineRequest::Streamed;
    rc.analysis.stream_rows = 5;  // does not divide N = 32
    const auto st = analyze(rc);
    REQUIRE(st["config"]["mode"] == "streamed");
    REQUIRE(st["config"]["stream_rows"] == 5);
    REQUIRE(st["config"]["mode_reason"].get<std::string>().find("--mode streamed") != std::string::npos);
    REQUIRE(st["summary"]["rms_gain_method"] == "exact (streamed)");
    REQUIRE(st["summary"]["stream_chunks"] == 7);
    for (size_t l = 0; l < 3; ++l) {
      const auto &a = ex["layers"][l], &b = st["layers"][l];
      INFO("layer " << l << (causal ? " causal" : ""));
      REQUIRE(a["grad_norm"].get<double>() == b["grad_norm"].get<double>());  // the same backward pass
      for (const char* grp : {"product_jacobian", "block_jacobian"}) {
        const double fe = a[grp]["frobenius_norm"], fs = b[grp]["frobenius_norm"];
        CHECK(std::abs(fe - fs) <= kCrossTol * fe);
        const double ge = a[grp]["rms_gain"], gs = b[grp]["rms_gain"];
        CHECK(std::abs(ge - gs) <= kCrossTol * ge);
        const double m = b[grp]["mean_squared_singular_value"];
        CHECK(std::abs(m - fe * fe / 32) <= kCrossTol * fe * fe / 32);
        CHECK(b[grp]["method"] == "exact (streamed)");
        CHECK(!b[grp].contains("spectral_norm"));  // singular values are not streamed
      }
      CHECK(b["product_jacobian"]["size"] == 32);
    }
    const double pe = ex["summary"]["per_layer_rms_gain_product"], ps = st["summary"]["per_layer_rms_gain_product"];
    CHECK(std::abs(pe - ps) <= kCrossTol * pe);
  }
}

namespace {
// A 3-layer small model over 4 tokens, quiet, with the engine asked for.
RunConfig small_run(const char* placement, EngineRequest engine) {
  RunConfig rc;
  rc.model = small_model(placement, 3);
  rc.analysis.seq_len = 4;
  rc.analysis.progress = false;
  rc.analysis.engine_request = engine;
  return rc;
}
}  // namespace

TEST_CASE("analyze --mode streamed through the kernels' chain (the --device cuda path, on the CPU's kernels): the "
          "same report to kCrossTol", "[engine]") {
  for (const char* placement : {"pre", "post", "b2t", "normformer", "sub-ln", "hybridnorm", "resi-dual"}) {
    RunConfig rc = small_run(placement, EngineRequest::Streamed);
    rc.analysis.stream_rows = 7;
    const auto host = analyze(rc);
    rc.analysis.kernel_chain = true;
    const auto kern = analyze(rc);
    INFO(placement);
    CHECK(kern["summary"]["stream_chunks"] == host["summary"]["stream_chunks"]);
    for (size_t l = 0; l < 3; ++l)
      for (const char* grp : {"product_jacobian", "block_jacobian"}) {
        const double a = host["layers"][l][grp]["frobenius_norm"], b = kern["layers"][l][grp]["frobenius_norm"];
        CHECK(std::abs(a - b) <= kCrossTol * a);
        CHECK(kern["layers"][l][grp]["method"] == "exact (streamed)");
      }
  }
}

TEST_CASE("analyze --mode matrix-free with Lanczos and Hutchinson through the kernels' chain (the --device cuda path, "
          "on the CPU's kernels): the same spectral norms to kLanczosTol, the same Hutchinson estimates to kCrossTol",
          "[engine]") {
  RunConfig rc = small_run("pre", EngineRequest::MatrixFree);
  rc.analysis.hutchinson_probes = 8;
  const auto host = analyze(rc);
  rc.analysis.kernel_chain = true;
  const auto kern = analyze(rc);
  for (size_t l = 0; l < 3; ++l)
    for (const char* grp : {"product_jacobian", "block_jacobian"}) {
      INFO("layer " << l << " " << grp);
      const double a = host["layers"][l][grp]["spectral_norm"], b = kern["layers"][l][grp]["spectral_norm"];
      CHECK(std::abs(a - b) <= kLanczosTol * a);
      for (const char* key : {"frobenius_norm", "frobenius_std_error"}) {  // the same probes through either chain
        const double f = host["layers"][l][grp][key], g = kern["layers"][l][grp][key];
        CHECK(std::abs(f - g) <= kCrossTol * f);
      }
      CHECK(kern["layers"][l][grp]["hutchinson_probes"] == 8);
    }
}

TEST_CASE("mode: streamed validates --stream-rows, refuses --spectrum and runs over its own budget, auto never "
          "chooses it", "[engine]") {
  AnalysisOptions o;
  o.seq_len = 4;
  o.engine_request = EngineRequest::Streamed;
  const ModelConfig cfg = small_model("post", 3);
  for (const Index bad : {Index{0}, Index{-3}}) {
    o.stream_rows = bad;
    REQUIRE_THROWS_WITH(choose_engine(cfg, o, RunBackend(o.backend)),
                        Catch::Contains("--stream-rows") && Catch::Contains("fix:"));
  }
  o.stream_rows = 256;
  REQUIRE(choose_engine(cfg, o, RunBackend(o.backend)).engine == Engine::Streamed);
  o.spectrum = true;
  REQUIRE_THROWS_WITH(choose_engine(cfg, o, RunBackend(o.backend)), Catch::Contains("--spectrum"));
  o.spectrum = false;
  // the chunk and its images: 3·K·N doubles beyond matrix-free's estimate for K probes; K is clamped to N
  const double N = 4 * 8;
  CHECK(streamed_memory(cfg, 4, 10).total() ==
        Approx(streaming_memory_estimate(cfg, 4, 10) + 3 * 10 * N * 8).epsilon(kClosedFormTol));
  CHECK(streamed_memory(cfg, 4, 1000).total() == streamed_memory(cfg, 4, 32).total());
  o.max_memory_bytes = streamed_memory(cfg, 4, 256).total() - 1;
  REQUIRE_THROWS_WITH(choose_engine(cfg, o, RunBackend(o.backend)),
                      Catch::Contains("streamed mode") && Catch::Contains("--stream-rows"));
  o.engine_request = EngineRequest::Auto;
  for (const double budget : {1e3, 1e6, 1e12}) {
    o.max_memory_bytes = budget;
    Engine chosen = Engine::Explicit;
    try {
      chosen = choose_engine(cfg, o, RunBackend(o.backend)).engine;
    } catch (const Error&) {  // below every engine's estimate: refused, never streamed
    }
    CHECK(chosen != Engine::Streamed);
  }
  REQUIRE(parse_engine_request("streamed", false) == EngineRequest::Streamed);
  REQUIRE(std::string(to_string(Engine::Streamed)) == "streamed");
}
