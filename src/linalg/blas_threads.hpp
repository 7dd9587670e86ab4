// blas_threads.hpp — BLAS and LAPACK calls whose results do not depend on the thread count (blas_threads.cpp).
#pragma once

#include <functional>

namespace gradflow {

// Block edges of a split product fall on multiples of this many rows or columns: a multiple of every OpenBLAS
// kernel's tile (at most 16 × 8 on x86-64), so that no block ends in a partial tile the whole product would not have.
inline constexpr long kTileAlign = 64;
// A block gets at least this many multiply-adds (m·n·k): above the size below which OpenBLAS 0.3.21 may switch to
// its small-matrix kernels (100³), so a block is computed by the same kernels as the whole product.
inline constexpr long kMinBlockWork = 1L << 21;

// How dgemm_ cuts C (column-major m × n): along its columns (by_columns) or rows, into `blocks` blocks of `width`
// (the last one shorter), one per thread; blocks == 1: the whole product on one thread.
struct GemmSplit {
  bool by_columns;
  long width;
  int blocks;
};
GemmSplit gemm_split(long m, long n, long k, int threads);

// Runs f (a BLAS or LAPACK call, which does not throw) so that OpenBLAS does it on the calling thread alone: directly
// inside a parallel region or with one thread, otherwise with the caller's OpenMP thread count set to 1 meanwhile.
void on_one_thread(const std::function<void()>& f);

}  // namespace gradflow
