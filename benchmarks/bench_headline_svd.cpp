// bench_headline_svd.cpp — the headline's singular values for docs/benchmarks.md (not a test; run by
// benchmarks/run_benchmarks.py): `gradflow analyze --placement post --layers 24`'s model and input (defaults: d = 64,
// h = 4, n = 16, N = 1024, seed 0), its 24 products P_l, and on those same matrices
//   naive    plain LAPACK dgesdd (jobz = 'N') on each P_l in turn, OpenBLAS on every thread: the path before issue 14
//   banded   singular_values (the two-stage band route from kBandedSvdMin on), one thread, each P_l in turn
//   paired   the same calls two layers at a time, one thread each, as the jacobian-norms analysis runs them
//   dgemm    the machine's DGEMM rate on (N, N)·(N, N), measured in the same run
// and the largest differences between the routes (σ_max, σ_min above kRankRtol·σ_max, numerical rank).
// Prints one JSON object.
#include "process/runtime_env.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "gradflow/linalg/svd.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/run/context.hpp"

using namespace gradflow;
using Clock = std::chrono::steady_clock;

static double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int main(int argc, char** argv) {
  gradflow::process::tune_runtime_environment(argv);  // as the gradflow executable does
  const int reps = argc > 1 ? std::atoi(argv[1]) : 1;
  ModelConfig cfg;  // the CLI's defaults
  cfg.placement = "post";
  cfg.layers = 24;
  const Index n = AnalysisOptions{}.seq_len, N = n * cfg.d_model;
  Model model(cfg);
  const InitConfig init;
  initialize(model, init);
  const Mat x0 = random_normal(init.seed, "input", n, cfg.d_model);
  AnalysisOptions opts;
  AnalysisContext ctx(model, x0, opts, make_backend(BackendKind::Cpu));
  std::vector<Mat> P(static_cast<size_t>(cfg.layers));
  const auto tw = Clock::now();
  ctx.for_each_product([&](Index l, const Mat&, const Mat& Pl) { P[static_cast<size_t>(l)] = Pl; });
  const double walk = seconds_since(tw);
  const size_t L = P.size();

  double naive = 1e300, banded = 1e300, paired = 1e300, gemm = 1e300;
  std::vector<Vec> sn(L), sb(L), sp(L);
  for (int r = 0; r < reps; ++r) {
    auto t = Clock::now();
    for (size_t l = 0; l < L; ++l) sn[l] = singular_values_dgesdd(P[l]);
    naive = std::min(naive, seconds_since(t));
    t = Clock::now();
#pragma omp parallel num_threads(2)  // active region: BLAS on one thread; the second thread waits
    {
#pragma omp single
      for (size_t l = 0; l < L; ++l) sb[l] = singular_values(P[l]);
    }
    banded = std::min(banded, seconds_since(t));
    t = Clock::now();
#pragma omp parallel for schedule(dynamic, 1) num_threads(2)
    for (int l = 0; l < static_cast<int>(L); ++l) sp[static_cast<size_t>(l)] = singular_values(P[static_cast<size_t>(l)]);
    paired = std::min(paired, seconds_since(t));
    const Mat A = random_normal(1, "a", N, N), B = random_normal(2, "b", N, N);
    Mat C(N, N);
    t = Clock::now();
    C.noalias() = A * B;
    gemm = std::min(gemm, seconds_since(t));
    if (C(0, 0) == 12345.678) std::puts("");
  }
  // differences between the routes, and paired against banded (must be identical: same single-threaded calls)
  double d_max = 0, d_min = 0, d_all = 0;
  long rank_diff = 0, paired_diff = 0;
  for (size_t l = 0; l < L; ++l) {
    const SpectrumSummary a = summarize_spectrum(sb[l], 0), b = summarize_spectrum(sn[l], 0);
    d_max = std::max(d_max, std::abs(a.spectral_norm - b.spectral_norm) / b.spectral_norm);
    d_min = std::max(d_min, std::abs(a.min_singular_value - b.min_singular_value) / b.min_singular_value);
    d_all = std::max(d_all, (sb[l] - sn[l]).cwiseAbs().maxCoeff() / b.spectral_norm);
    rank_diff += std::abs(static_cast<long>(a.numerical_rank - b.numerical_rank));
    paired_diff += (sp[l] != sb[l]);
  }
  const double dN = static_cast<double>(N), gemm_rate = 2 * dN * dN * dN / gemm;
  // flops of the headline's explicit part: L − 1 products 2N³, L bidiagonalizations 8N³/3 (either route)
  const double flops = static_cast<double>(L - 1) * 2 * dN * dN * dN + static_cast<double>(L) * 8.0 / 3.0 * dN * dN * dN;
  std::printf("{\"N\": %ld, \"layers\": %zu, \"threads\": %d, \"walk_seconds\": %.4f, \"naive_dgesdd_seconds\": %.4f, "
              "\"banded_one_thread_seconds\": %.4f, \"paired_seconds\": %.4f, \"dgemm_gflops\": %.3f, "
              "\"explicit_flops\": %.4e, \"ceiling_seconds\": %.4f, \"max_rel_diff_sigma_max\": %.3e, "
              "\"max_rel_diff_sigma_min\": %.3e, \"max_abs_diff_over_sigma_max\": %.3e, \"rank_differences\": %ld, "
              "\"paired_vs_banded_differences\": %ld}\n",
              static_cast<long>(N), L, omp_get_max_threads(), walk, naive, banded, paired, gemm_rate / 1e9, flops,
              flops / gemm_rate, d_max, d_min, d_all, rank_diff, paired_diff);
  return 0;
}
