// test_device_auto.cpp — what `--mode auto` asks of the hardware that would run the engine (run/engine.hpp,
// run/time_estimate.hpp): the GEMM rate streamed mode is weighed by, measured through a backend's kernels (the
// device's with --device cuda, which runs the chain) with its product checked, the CPU's own rate for --device cpu;
// and, with a device, whether explicit mode's 5 N² fit its free memory.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "backends.hpp"
#include "gradflow/kernels/forwarding_kernels.hpp"
#include "gradflow/run/engine.hpp"
#include "gradflow/run/time_estimate.hpp"
#include "small_model.hpp"

using namespace gradflow;
using namespace gradflow::test;

namespace {

// The CPU's kernels with a GEMM that scales its product by 2: the rate's check of its own product must refuse it.
class WrongGemm final : public ForwardingKernelOps {
 public:
  using ForwardingKernelOps::ForwardingKernelOps;
  void gemm(Index m, Index n, Index k, double alpha, const GemmOperand& A, const GemmOperand& B, double beta, double* c,
            Index ldc, Index c_stride, Index batch) const override {
    inner().gemm(m, n, k, 2 * alpha, A, B, beta, c, ldc, c_stride, batch);
  }
};

}  // namespace

TEST_CASE("gemm rate: measured through the CPU's kernels with its product checked, the CPU's own for --device cpu",
          "[backend]") {
  const auto cpu = backend_or_skip(BackendKind::Cpu);
  const double r = gemm_rate_of_kernels(cpu->kernels(), 256, 2);
  CHECK(r > 1e8);   // 0.1 GFLOP/s: far below any machine's DGEMM
  CHECK(r < 1e14);  // 100 TFLOP/s: far above a CPU's
  const WrongGemm wrong(cpu->kernels());
  REQUIRE_THROWS_WITH(gemm_rate_of_kernels(wrong, 64, 1), Catch::Contains("product is wrong"));
  CHECK(cpu->gemm_rate() == host_dgemm_rate());
}

TEST_CASE("device auto: the CPU backend reports no device memory limit, explicit's device need is 5 N^2", "[backend]") {
  CHECK(make_backend(BackendKind::Cpu)->free_memory() == std::numeric_limits<double>::infinity());
  const ModelConfig cfg = small_model("post", 2);  // d = 8
  CHECK(explicit_device_bytes(cfg, 4) == 5.0 * 32 * 32 * 8);
  CHECK(explicit_device_bytes(small_model("resi-dual", 2), 4) == 5.0 * 64 * 64 * 8);  // the state's 2N
}

#ifdef GRADFLOW_HAVE_CUDA
TEST_CASE("gemm rate cuda: the GPU's fp64 rate, measured through its kernels, above the CPU's", "[cuda]") {
  const double r = backend_or_skip(BackendKind::Cuda)->gemm_rate();
  CHECK(r > host_dgemm_rate());
  CHECK(r < 1e15);
}

TEST_CASE("device auto cuda: explicit when its 5 N^2 fit the GPU's free memory, not when they do not", "[cuda]") {
  const auto gpu = backend_or_skip(BackendKind::Cuda);
  AnalysisOptions o;
  o.engine_request = EngineRequest::Auto;
  o.backend = BackendKind::Cuda;
  o.max_memory_bytes = 1e15;  // the host's budget out of the way
  o.max_time_seconds = 1;     // and streamed's: what is left is matrix-free
  o.seq_len = 4;
  const EngineChoice small = choose_engine(small_model("post", 2), o, RunBackend(o.backend));
  CHECK(small.engine == Engine::Explicit);
  CHECK_THAT(small.reason, Catch::Contains("on the cuda device") && Catch::Contains("are free"));
  // N = n·d with 5·N²·8 bytes beyond the free memory
  ModelConfig big = small_model("post", 2);
  big.d_model = 512;
  big.heads = 8;
  big.d_ff = 2048;
  o.seq_len = static_cast<Index>(std::sqrt(gpu->free_memory() / 40.0) / 512.0) + 8;
  const EngineChoice c = choose_engine(big, o, RunBackend(o.backend));
  CHECK(c.engine == Engine::MatrixFree);
  CHECK_THAT(c.reason, Catch::Contains("are free"));
}
#endif
