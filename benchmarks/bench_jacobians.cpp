// bench_jacobians.cpp — explicit-mode timings for docs/benchmarks.md (not a test; run by
// benchmarks/run_benchmarks.py beside PyTorch):
//   block     one Post-LN block's explicit Jacobian at n = 32, d = 64 (N = 2048), best of R runs
//   products  the 24-layer products P_l = P_{l+1}·B_l at N = 2048: the GEMMs alone, and the walk analyze
//             takes (for_each_product: build B_l, multiply, check), both against DGEMM
//   dgemm     the machine's DGEMM rate on (N, N)·(N, N), measured in the same run
// Prints one JSON object. `bench_jacobians 1 R llama`: one llama-preset block's explicit Jacobian alone (Pre-RMSNorm,
// SwiGLU, RoPE, grouped-query heads 4:2, no biases, causal; n = 32, d = 64, N = 2048), best of R, warm
// (benchmarks/bench_decoder_block.py times PyTorch's on the same block).
#include "process/runtime_env.hpp"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gradflow/run/context.hpp"
#include "gradflow/model/init.hpp"

using namespace gradflow;
using Clock = std::chrono::steady_clock;

static double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int main(int argc, char** argv) {
  gradflow::process::tune_runtime_environment(argv);  // as the gradflow executable does
  const Index layers = argc > 1 ? std::atol(argv[1]) : 24;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 3;
  const bool llama = argc > 3 && std::string(argv[3]) == "llama";
  ModelConfig cfg;
  cfg.placement = "post";
  cfg.layers = layers;
  cfg.d_model = 64;
  cfg.heads = 4;
  if (llama) {  // --arch llama --kv-heads 2
    cfg.placement = "pre";
    cfg.norm = NormKind::RMSNorm;
    cfg.ffn = FeedForwardKind::SwiGLU;
    cfg.rope = true;
    cfg.bias = false;
    cfg.causal = true;
    cfg.kv_heads = 2;
  }
  const Index n = 32, N = n * cfg.d_model;
  Model model(cfg);
  initialize(model, InitConfig{});
  const Mat x0 = random_normal(0, "input", n, cfg.d_model);
  AnalysisOptions opts;
  AnalysisContext ctx(model, x0, opts, make_backend(BackendKind::Cpu));
  if (llama) {
    (void)model.block_jacobian(0, ctx.trace.blocks[0]).to_dense();  // warm-up
    double best = 1e300;
    for (int r = 0; r < reps; ++r) {
      const auto t = Clock::now();
      const Mat B = model.block_jacobian(0, ctx.trace.blocks[0]).to_dense();
      best = std::min(best, seconds_since(t));
      if (B(0, 0) == 12345.678) std::puts("");  // keep B alive
    }
    std::printf("{\"N\": %ld, \"block_jacobian_seconds\": %.6f}\n", static_cast<long>(N), best);
    return 0;
  }

  // one block's explicit Jacobian (dense (N, N))
  double best_block = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t = Clock::now();
    const Mat B = model.block_jacobian(0, ctx.trace.blocks[0]).to_dense();
    best_block = std::min(best_block, seconds_since(t));
    if (B(0, 0) == 12345.678) std::puts("");  // keep B alive
  }

  // the machine's DGEMM rate on the same shapes
  const Mat A = random_normal(1, "a", N, N), Bm = random_normal(2, "b", N, N);
  Mat C(N, N);
  double best_gemm = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t = Clock::now();
    C.noalias() = A * Bm;
    best_gemm = std::min(best_gemm, seconds_since(t));
  }
  const double gemm_flops = 2.0 * double(N) * double(N) * double(N);

  // the products across depth, two ways:
  //  raw:  the P·B GEMMs alone on prebuilt dense B_l (each product timed; best and total reported)
  //  walk: AnalysisContext::for_each_product, the path `analyze` takes (builds each B_l, multiplies, checks
  //        finiteness), against (L − 1) DGEMMs of the same shape
  std::vector<Mat> Bs;
  double build = 0;
  for (Index l = 0; l < layers; ++l) {
    const auto t = Clock::now();
    Bs.push_back(ctx.layer_jacobian(l).to_dense());
    build += seconds_since(t);
  }
  Mat P = Bs.back(), Pn(N, N);
  double prod = 0, best_prod = 1e300;
  for (Index l = layers - 2; l >= 0; --l) {
    const auto t = Clock::now();
    Pn.noalias() = P * Bs[static_cast<size_t>(l)];
    const double dt = seconds_since(t);
    prod += dt;
    best_prod = std::min(best_prod, dt);
    P.swap(Pn);
  }
  Bs.clear();
  const double prod_flops = gemm_flops * double(layers - 1);
  double check = 0;
  const auto tw = Clock::now();
  ctx.for_each_product([&](Index, const Mat& B, const Mat& Pl) { check += B(0, 0) + Pl(0, 0); });
  const double walk = seconds_since(tw);
  std::printf("{\"N\": %ld, \"layers\": %ld, \"block_jacobian_seconds\": %.6f, \"dgemm_seconds\": %.6f, "
              "\"dgemm_gflops\": %.3f, \"products_seconds\": %.6f, \"products_gflops\": %.3f, "
              "\"products_fraction_of_dgemm\": %.4f, \"best_product_fraction_of_dgemm\": %.4f, "
              "\"block_jacobians_build_seconds\": %.4f, \"walk_seconds\": %.4f, \"walk_fraction_of_dgemm\": %.4f, "
              "\"check\": %.6e}\n",
              static_cast<long>(N), static_cast<long>(layers), best_block, best_gemm, gemm_flops / best_gemm / 1e9, prod,
              prod_flops / prod / 1e9, (prod_flops / prod) / (gemm_flops / best_gemm), best_gemm / best_prod, build, walk,
              (prod_flops / walk) / (gemm_flops / best_gemm), P.norm() + C(0, 0) + check);
  return 0;
}
