// test_run_backend.cpp — the run's one backend (backend.hpp: RunBackend, parse_backend_kind) and how it is handed
// down: analyze builds it once for the engine choice, the context and the analyses; --mode auto asks it (not a
// backend of its own) for its free memory and GEMM rate; a device that cannot be built is tried once and said so; and
// an injected backend that is not on the host runs every analysis's device path on this machine (no GPU needed),
// with no analysis asking which backend it is.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "gradflow/backend/backend.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/run/analyze.hpp"
#include "gradflow/run/engine.hpp"
#include "tolerances.hpp"

using namespace gradflow;
using gradflow::test::kBackendTol;
using Json = nlohmann::ordered_json;

namespace {

// The CPU backend dressed as a device: kind cuda, not on the host, with the free memory and GEMM rate it is given.
// Its buffers are the CPU's, so its numbers are the CPU backend's own calls, reached through the device paths.
class TestDevice final : public Backend {
 public:
  TestDevice(double free_bytes, double rate) : cpu_(make_backend(BackendKind::Cpu)), free_(free_bytes), rate_(rate) {}
  BackendKind kind() const override { return BackendKind::Cuda; }
  std::string description() const override { return "test device"; }
  bool on_host() const override { return false; }
  void require_memory(double, const std::string&) const override {}
  double free_memory() const override { return free_; }
  double gemm_rate() const override { return rate_; }
  std::unique_ptr<DenseBuffer> upload(Mat host) const override { return cpu_->upload(std::move(host)); }
  std::unique_ptr<DenseBuffer> multiply(std::unique_ptr<DenseBuffer> P, const Jacobian& B) const override {
    return cpu_->multiply(std::move(P), B);
  }
  std::unique_ptr<DenseBuffer> densify(Jacobian&& B) const override { return cpu_->densify(std::move(B)); }
  bool all_finite(const DenseBuffer& A) const override { return cpu_->all_finite(A); }
  double frobenius_norm(const DenseBuffer& A) const override { return cpu_->frobenius_norm(A); }
  double spectral_norm(const DenseBuffer& A) const override { return cpu_->spectral_norm(A); }
  IdentityDistance minus_identity_norms(const DenseBuffer& A) const override { return cpu_->minus_identity_norms(A); }
  Vec singular_values(const DenseBuffer& A) const override { return cpu_->singular_values(A); }
  const KernelOps& kernels() const override { return cpu_->kernels(); }

 private:
  std::unique_ptr<Backend> cpu_;
  double free_, rate_;
};

RunConfig small_run(EngineRequest engine) {
  RunConfig rc;
  rc.model.placement = "pre";
  rc.model.layers = 3;
  rc.model.d_model = 8;
  rc.model.heads = 2;
  rc.model.d_ff = 16;
  rc.analysis.seq_len = 16;  // N = 128: explicit's 7 N^2 well above streamed's and matrix-free's memory
  rc.analysis.stream_rows = 8;
  rc.analysis.hutchinson_probes = 4;
  rc.analysis.progress = false;
  rc.analysis.engine_request = engine;
  rc.init.seed = 5;
  return rc;
}

Json without_timing(Json r) {
  r.erase("elapsed_seconds");
  r.erase("timing_seconds");
  if (r["config"].contains("time_estimate")) r["config"].erase("time_estimate");
  return r;
}

}  // namespace

TEST_CASE("run backend: --device parses once into the enum, anything else is a one-line error", "[backend]") {
  CHECK(parse_backend_kind("cpu") == BackendKind::Cpu);
  CHECK(parse_backend_kind("cuda") == BackendKind::Cuda);
  try {
    parse_backend_kind("gpu");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.exit_code() == 2);
    CHECK_THAT(std::string(e.what()), Catch::Contains("--device 'gpu'") && Catch::Contains("fix:"));
  }
}

TEST_CASE("run backend: analyze builds the run's backend once, also when auto weighs streamed mode", "[backend]") {
  for (const bool explicit_fits : {true, false}) {
    INFO("explicit fits: " << explicit_fits);
    RunConfig rc = small_run(EngineRequest::Auto);
    if (!explicit_fits) rc.analysis.max_memory_bytes = explicit_memory_estimate(rc.model, rc.analysis.seq_len) - 1;
    int built = 0;
    const RunBackend backend(BackendKind::Cpu, [&](BackendKind k) {
      ++built;
      return make_backend(k);
    });
    const Json report = analyze(rc, backend);
    CHECK(built == 1);
    CHECK(report["config"]["mode"] == (explicit_fits ? "explicit" : "streamed"));
    CHECK(without_timing(report) == without_timing(analyze(rc)));  // the same report as analyze's own backend's
  }
}

TEST_CASE("run backend: auto asks the run's backend for its free memory and GEMM rate", "[backend]") {
  const ModelConfig cfg = small_run(EngineRequest::Auto).model;
  AnalysisOptions o = small_run(EngineRequest::Auto).analysis;
  o.backend = BackendKind::Cuda;
  o.max_memory_bytes = 1e15;  // the host's budget out of the way
  const double need = explicit_device_bytes(cfg, o.seq_len);
  // explicit's 5 N^2 fit the device's free memory: explicit, and the reason gives what is free
  const RunBackend roomy(BackendKind::Cuda, [&](BackendKind) { return std::make_unique<TestDevice>(need, 1e9); });
  const EngineChoice fits = choose_engine(cfg, o, roomy);
  CHECK(fits.engine == Engine::Explicit);
  CHECK_THAT(fits.reason, Catch::Contains("on the cuda device") && Catch::Contains("are free"));
  // one byte short: streamed, weighed at the device's rate (12.5 TFLOP/s: 1.25e+04 GFLOP/s)
  int built = 0;
  const RunBackend short_one(BackendKind::Cuda, [&](BackendKind) {
    ++built;
    return std::make_unique<TestDevice>(need - 1, 1.25e13);
  });
  const EngineChoice c = choose_engine(cfg, o, short_one);
  CHECK(built == 1);  // asked twice (free memory, GEMM rate), built once
  CHECK(c.streamed_considered);
  CHECK(c.dgemm_rate == 1.25e13);
  CHECK(c.engine == Engine::Streamed);
  CHECK_THAT(c.reason, Catch::Contains("1.25e+04 GFLOP/s DGEMM measured on the cuda"));
}

TEST_CASE("run backend: a device that cannot be built is tried once, said so by auto, its error kept", "[backend]") {
  const ModelConfig cfg = small_run(EngineRequest::Auto).model;
  AnalysisOptions o = small_run(EngineRequest::Auto).analysis;
  o.backend = BackendKind::Cuda;
  // explicit (its host part with a device) does not fit: the rate is asked
  o.max_memory_bytes = explicit_memory(cfg, o.seq_len, BackendKind::Cuda).total() - 1;
  int tries = 0;
  const RunBackend none(BackendKind::Cuda, [&](BackendKind) -> std::unique_ptr<Backend> {
    ++tries;
    throw Error("--device cuda: no device in this test; fix: use --device cpu");
  });
  const EngineChoice c = choose_engine(cfg, o, none);
  CHECK_THAT(c.reason, Catch::Contains("device's could not be measured"));
  CHECK(c.dgemm_rate == host_dgemm_rate());
  o.max_memory_bytes = 1e15;  // explicit fits the host: the free memory is asked
  CHECK_THAT(choose_engine(cfg, o, none).reason, Catch::Contains("free memory could not be asked here"));
  CHECK_THROWS_WITH(none.get(), Catch::Contains("no device in this test"));
  CHECK(tries == 1);
  // --gradients-only with a device is refused by the option alone, without asking for the device
  o.engine_request = EngineRequest::GradientsOnly;
  CHECK_THROWS_WITH(choose_engine(cfg, o, none), Catch::Contains("not gradients-only mode"));
  CHECK(tries == 1);
}

TEST_CASE("run backend: a backend off the host runs every engine's device path, to the CPU's numbers", "[backend]") {
  for (const EngineRequest engine : {EngineRequest::Explicit, EngineRequest::Streamed, EngineRequest::MatrixFree}) {
    INFO(to_string(engine));
    RunConfig rc = small_run(engine);
    const Json cpu = analyze(rc);
    rc.analysis.kernel_chain = engine != EngineRequest::Explicit;  // the CPU's own run of the kernels' chain
    const Json kernels = analyze(rc);
    rc.analysis.kernel_chain = false;
    rc.analysis.backend = BackendKind::Cuda;
    const Json dev = analyze(rc, RunBackend(BackendKind::Cuda, [](BackendKind) {
                               return std::make_unique<TestDevice>(1e15, 1e12);
                             }));
    CHECK(dev["config"]["device"] == "cuda");
    CHECK(dev["config"]["device_description"] == "test device");
    for (size_t l = 0; l < 3; ++l)
      for (const char* grp : {"product_jacobian", "block_jacobian"}) {
        INFO("layer " << l << " " << grp);
        // the chains: the CPU's run of the kernels' chain, bit for bit; the explicit walk: the CPU backend's calls on
        // its buffers, layer by layer (not the host path's copies, one layer per thread), to kBackendTol
        if (engine != EngineRequest::Explicit) {
          CHECK(dev["layers"][l][grp] == kernels["layers"][l][grp]);
          continue;
        }
        for (const char* key : {"frobenius_norm", "spectral_norm"}) {
          const double a = cpu["layers"][l][grp][key], b = dev["layers"][l][grp][key];
          CHECK(std::abs(a - b) <= kBackendTol * a);
        }
      }
  }
}
