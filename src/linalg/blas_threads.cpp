// blas_threads.cpp — the BLAS routines gradflow calls give the same bits on any number of threads
// (docs/experiments.md, "Parallelism and determinism").
//
// OpenBLAS 0.3.21 splits a large product between threads itself, and where its split falls off its kernels' tile
// boundaries the last bits change: at 3, 5, 6, 7, 9–15 threads for the default models' power-of-two shapes, already
// at 2 threads for a dimension such as 333. So this file defines, in front of OpenBLAS's, the routines Eigen calls
// (EIGEN_USE_BLAS; OpenBLAS's own LAPACK calls them through its PLT too, so they cover dgesdd's inner products):
//  - dgemm_: C is cut into blocks of whole columns (or rows, whichever dimension is longer) whose edges are
//    multiples of kTileAlign, one block per thread, each an OpenBLAS call on its thread alone (inside a parallel
//    region OpenBLAS does not split). Inside a parallel region that may start a nested team (a runner's worker with
//    its share of the threads, src/experiments/runner.cpp) the blocks go to a nested team of the worker's size.
//    Every entry of C is then summed by the same kernel tile, in the same order, as in one single-threaded call of
//    the whole product (tests/linalg/test_blas_threads.cpp checks it bit for bit, on shapes that are not multiples
//    of anything).
//  - dgemv_, dsymv_, dtrmv_, dtrmm_, ddot_: run on one thread (they are small or memory-bound where gradflow uses
//    them; OpenBLAS splits the sums of some of them).
//  - sgemm_ (an emulated precision's float32 products): blocks of C fixed by the shape, shared among the threads
//    (at its definition: dgemm_'s split did not keep SGEMM's bits). The others are split by OpenBLAS only entry by entry.
// The real routines are found with dlsym(RTLD_NEXT): the BLAS library linked after gradflow's own code.
#include "linalg/blas_threads.hpp"

#include <dlfcn.h>
#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace gradflow {

void on_one_thread(const std::function<void()>& f) {
  const int threads = omp_get_max_threads();
  if (omp_in_parallel() || threads == 1) {
    f();
    return;
  }
  // OpenBLAS's OpenMP build takes its thread count from the caller's omp_get_max_threads() at every call: one, for
  // this call only (the setting belongs to the calling thread; no team is started, which under load would cost a
  // wait for a second thread to be scheduled on every small call)
  omp_set_num_threads(1);
  f();
  omp_set_num_threads(threads);
}

GemmSplit gemm_split(long m, long n, long k, int threads) {
  const bool by_columns = n >= m;
  const long len = by_columns ? n : m, other = by_columns ? m : n;
  long blocks = std::min<long>(threads, (len + kTileAlign - 1) / kTileAlign);
  // each block large enough that OpenBLAS takes its ordinary kernels for it, as for the whole product
  if (k > 0 && other > 0) blocks = std::min<long>(blocks, std::max<long>(1, len * other * k / kMinBlockWork));
  if (blocks <= 1) return {by_columns, len, 1};
  const long width = ((len + blocks - 1) / blocks + kTileAlign - 1) / kTileAlign * kTileAlign;
  return {by_columns, width, static_cast<int>((len + width - 1) / width)};
}

}  // namespace gradflow

namespace {

// OpenBLAS's routine of that name (its Fortran interface returns nothing; Eigen declares these int)
template <class F>
F real(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) {
    std::fprintf(stderr, "gradflow: error: no BLAS routine %s after gradflow's own; fix: link a BLAS (OpenBLAS)\n", name);
    std::abort();
  }
  return reinterpret_cast<F>(f);
}

bool transposed(const char* t) { return *t != 'N' && *t != 'n'; }

template <class T>
using GemmFn = void (*)(const char*, const char*, const int*, const int*, const int*, const T*, const T*, const int*,
                        const T*, const int*, const T*, T*, const int*);

// One block of C: columns (by_columns) or rows [from, from + size) of the product, as one call of gemm
template <class T>
void gemm_block(GemmFn<T> gemm, bool by_columns, long from, int size, const char* ta, const char* tb, const int* m,
                const int* n, const int* k, const T* alpha, const T* a, const int* lda, const T* b, const int* ldb,
                const T* beta, T* c, const int* ldc) {
  if (by_columns) {
    const T* bj = transposed(tb) ? b + from : b + from * *ldb;
    gemm(ta, tb, m, &size, k, alpha, a, lda, bj, ldb, beta, c + from * *ldc, ldc);
  } else {
    const T* ai = transposed(ta) ? a + from * *lda : a + from;
    gemm(ta, tb, &size, n, k, alpha, ai, lda, b, ldb, beta, c + from, ldc);
  }
}

// OpenBLAS's ?gemm_ (gemm) for C = alpha·op(A)·op(B) + beta·C, cut into blocks of C as described above
template <class T>
void split_gemm(GemmFn<T> gemm, const char* ta, const char* tb, const int* m, const int* n, const int* k,
                const T* alpha, const T* a, const int* lda, const T* b, const int* ldb, const T* beta, T* c,
                const int* ldc) {
  const auto whole = [&] { gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); };
  // inside a parallel region that cannot start a team of its own (OpenBLAS then runs on the calling thread alone), on
  // one thread, or an empty C: nothing to split. A runner's worker may start one: its engine's share of the threads
  if (omp_get_active_level() >= omp_get_max_active_levels() || omp_get_max_threads() == 1 || *m <= 0 || *n <= 0) {
    whole();
    return;
  }
  const gradflow::GemmSplit s = gradflow::gemm_split(*m, *n, *k, omp_get_max_threads());
  if (s.blocks == 1) {
    gradflow::on_one_thread(whole);
    return;
  }
  // column-major: C's rows i come from op(A)'s rows (A's rows, or A's columns when transposed), its columns j from
  // op(B)'s columns
#pragma omp parallel for num_threads(s.blocks) schedule(static, 1)
  for (int blk = 0; blk < s.blocks; ++blk) {
    const long from = blk * s.width, len = std::min(s.width, (s.by_columns ? *n : *m) - from);
    gemm_block(gemm, s.by_columns, from, static_cast<int>(len), ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

}  // namespace

extern "C" {

int dgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const double* alpha,
           const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
           const int* ldc) {
  static const GemmFn<double> gemm = real<GemmFn<double>>("dgemm_");
  split_gemm(gemm, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  return 0;
}

// float32 products (--precision f32|bf16|f16, kernels/precision_kernels.cpp): OpenBLAS 0.3.21's SGEMM gave other
// last bits for dgemm_'s thread-count-dependent split than for one whole call (measured 2026-12-06, m = 333,
// k = 300, n = 1000: 5e-5 apart at 2 to 5 threads), so C is cut into blocks that depend on the shape alone (whole
// columns or rows, kFloatBlock wide, when the product is large enough), the same on any thread count, and the
// blocks are shared among the threads.
int sgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const float* alpha,
           const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
           const int* ldc) {
  static const GemmFn<float> gemm = real<GemmFn<float>>("sgemm_");
  constexpr long kFloatBlock = 4 * gradflow::kTileAlign;
  const bool by_columns = *n >= *m;
  const long len = by_columns ? *n : *m, other = by_columns ? *m : *n;
  const long blocks = len * other * static_cast<long>(*k) >= gradflow::kMinBlockWork && len > kFloatBlock
                          ? (len + kFloatBlock - 1) / kFloatBlock : 1;
  const auto block = [&](long blk) {
    const long from = blk * kFloatBlock, size = blocks == 1 ? len : std::min(kFloatBlock, len - from);
    gemm_block(gemm, by_columns, from, static_cast<int>(size), ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  };
  if (blocks == 1 || omp_get_active_level() >= omp_get_max_active_levels() || omp_get_max_threads() == 1) {
    gradflow::on_one_thread([&] {
      for (long blk = 0; blk < blocks; ++blk) block(blk);
    });
    return 0;
  }
#pragma omp parallel for num_threads(static_cast<int>(std::min<long>(blocks, omp_get_max_threads()))) schedule(static)
  for (long blk = 0; blk < blocks; ++blk) block(blk);
  return 0;
}

int dgemv_(const char* t, const int* m, const int* n, const double* alpha, const double* a, const int* lda,
           const double* x, const int* incx, const double* beta, double* y, const int* incy) {
  using Fn = void (*)(const char*, const int*, const int*, const double*, const double*, const int*, const double*,
                     const int*, const double*, double*, const int*);
  static const Fn gemv = real<Fn>("dgemv_");
  gradflow::on_one_thread([&] { gemv(t, m, n, alpha, a, lda, x, incx, beta, y, incy); });
  return 0;
}

int dsymv_(const char* uplo, const int* n, const double* alpha, const double* a, const int* lda, const double* x,
           const int* incx, const double* beta, double* y, const int* incy) {
  using Fn = void (*)(const char*, const int*, const double*, const double*, const int*, const double*, const int*,
                     const double*, double*, const int*);
  static const Fn symv = real<Fn>("dsymv_");
  gradflow::on_one_thread([&] { symv(uplo, n, alpha, a, lda, x, incx, beta, y, incy); });
  return 0;
}

int dtrmv_(const char* uplo, const char* t, const char* diag, const int* n, const double* a, const int* lda,
           double* x, const int* incx) {
  using Fn = void (*)(const char*, const char*, const char*, const int*, const double*, const int*, double*,
                     const int*);
  static const Fn trmv = real<Fn>("dtrmv_");
  gradflow::on_one_thread([&] { trmv(uplo, t, diag, n, a, lda, x, incx); });
  return 0;
}

int dtrmm_(const char* side, const char* uplo, const char* t, const char* diag, const int* m, const int* n,
           const double* alpha, const double* a, const int* lda, double* b, const int* ldb) {
  using Fn = void (*)(const char*, const char*, const char*, const char*, const int*, const int*, const double*,
                     const double*, const int*, double*, const int*);
  static const Fn trmm = real<Fn>("dtrmm_");
  gradflow::on_one_thread([&] { trmm(side, uplo, t, diag, m, n, alpha, a, lda, b, ldb); });
  return 0;
}

// a dot product of more than 10 000 entries OpenBLAS splits between threads, and with it the sum
double ddot_(int* n, double* x, int* incx, double* y, int* incy) {  // Eigen declares it without const
  using Fn = double (*)(int*, double*, int*, double*, int*);
  static const Fn dot = real<Fn>("ddot_");
  double r = 0;
  gradflow::on_one_thread([&] { r = dot(n, x, incx, y, incy); });
  return r;
}

}  // extern "C"
