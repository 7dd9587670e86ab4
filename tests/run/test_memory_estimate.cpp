// test_memory_estimate.cpp — the memory estimates every command refuses by (src/run/memory_estimate.cpp, issue 13
// item 6): the parameter count read off the placement's recipe bounds the model's own count for every placement
// and norm, tightly; a billion layers is refused by every engine before anything is allocated, naming the part
// that does not fit.
#include <catch2/catch.hpp>

#include "gradflow/core/error.hpp"
#include "gradflow/model/model.hpp"
#include "gradflow/model/placement.hpp"
#include "gradflow/run/engine.hpp"
#include "gradflow/run/memory_estimate.hpp"
#include "small_model.hpp"

using namespace gradflow;
using namespace gradflow::test;

TEST_CASE("memory: the recipe's parameter count bounds the model's, within 3·d + 1 per norm-free slack per block",
          "[memory]") {
  for (const auto& p : placements()) {
    for (NormKind norm : {NormKind::LayerNorm, NormKind::RMSNorm, NormKind::DyT}) {
      ModelConfig cfg = small_model(p->name(), 5);
      cfg.norm = norm;
      INFO(p->name() << " " << to_string(norm));
      const double counted = body_parameter_count(cfg);
      const double actual = static_cast<double>(Model(cfg).params().numel());
      CHECK(counted >= actual);
      // slack: every norm counted as DyT's 2d + 1 (RMSNorm has d), and the final norm counted when absent
      CHECK(counted - actual <= 6.0 * (cfg.d_model + 1) * cfg.layers + 2 * cfg.d_model + 1);
    }
  }
}

TEST_CASE("memory: a billion layers is refused by every engine with the parameters named (the trace: gradients only)",
          "[memory]") {
  ModelConfig cfg = small_model("post", 1000000000);
  for (EngineRequest r : {EngineRequest::Auto, EngineRequest::Explicit, EngineRequest::MatrixFree,
                          EngineRequest::GradientsOnly, EngineRequest::Streamed}) {
    AnalysisOptions o;
    o.engine_request = r;
    o.max_memory_bytes = 1e9;
    try {
      choose_engine(cfg, o, RunBackend(o.backend));
      FAIL("not refused");
    } catch (const Error& e) {
      const std::string msg = e.what();
      // gradients only holds one block's weights at a time: its trace is what does not fit
      CHECK(msg.find(r == EngineRequest::GradientsOnly ? "forward trace" : "parameters") != std::string::npos);
      CHECK(msg.find("fix:") != std::string::npos);
    }
  }
  // the explicit estimate counts the parameters and the trace beside the Jacobians: more than 7 N² doubles
  const ModelConfig deep = small_model("pre", 10000);
  const double N = 16.0 * 8.0;
  CHECK(explicit_memory_estimate(deep, 16) > 7 * N * N * 8 + body_parameter_count(deep) * 8);
}

TEST_CASE("memory: with a device backend the host counts the B_l it builds, not the products on the device",
          "[memory]") {
  ModelConfig cfg = small_model("post", 2);
  cfg.d_model = 64;
  cfg.heads = 4;
  const Index n = 64;
  const double N = static_cast<double>(n) * 64.0, square = N * N * 8;  // one (N, N) matrix: 128 MiB
  const double cpu = explicit_memory(cfg, n).total(), cuda = explicit_memory(cfg, n, BackendKind::Cuda).total();
  CHECK(cpu - cuda == Approx(5 * square));
  AnalysisOptions o;
  o.engine_request = EngineRequest::Explicit;
  o.seq_len = n;
  o.max_memory_bytes = 4 * square;  // between the device run's 2 (N, N) and the CPU's 7
  CHECK_THROWS_AS(choose_engine(cfg, o, RunBackend(o.backend)), Error);
  o.backend = BackendKind::Cuda;
  CHECK(choose_engine(cfg, o, RunBackend(o.backend)).engine == Engine::Explicit);
}

TEST_CASE("memory: a gradients-only run with weights held per block counts one block's weights, not all of them",
          "[memory]") {
  ModelConfig cfg = small_model("post", 24);
  cfg.d_model = 512;
  cfg.heads = 8;
  cfg.d_ff = 2048;
  const double params = body_parameter_count(cfg) * sizeof(double);
  const MemoryEstimate whole = streaming_memory(cfg, 128, 0), per_block = streaming_memory(cfg, 128, 0, true);
  // all the weights and one block's gradients, against one block's weights and one block's gradients
  CHECK(whole.total() - per_block.total() == Approx(params * 23.0 / 24.0).epsilon(1e-12));
  // what choose_engine refuses by: the full-scale model's 605 MB of weights are not counted per block
  AnalysisOptions o;
  o.seq_len = 128;
  o.engine_request = EngineRequest::GradientsOnly;
  o.max_memory_bytes = 0.8 * params;  // ~460 MiB: the trace (~320 MiB) fits beside one block, not beside all
  CHECK_NOTHROW(choose_engine(cfg, o, RunBackend(BackendKind::Cpu)));
  o.weights_per_block = false;
  CHECK_THROWS_AS(choose_engine(cfg, o, RunBackend(BackendKind::Cpu)), Error);
}
