// gemm_rate.cpp — how fast a backend multiplies (backend.hpp: host_dgemm_rate, Backend::gemm_rate; kernel_ops.hpp:
// gemm_rate_of_kernels), measured once per process by short products: what --mode auto's time estimate divides by.
#include <algorithm>
#include <chrono>
#include <vector>

#include "gradflow/backend/backend.hpp"
#include "gradflow/kernels/kernel_ops.hpp"
#include "gradflow/core/error.hpp"

namespace gradflow {
namespace {
double time_dgemm_rate() {
  constexpr Index kSize = 512;
  Mat a = Mat::Constant(kSize, kSize, 0.5), b = Mat::Constant(kSize, kSize, 0.25), c(kSize, kSize);
  double best = 0;
  for (int rep = 0; rep < 6; ++rep) {  // the first is a warm-up (thread pool, page faults)
    const auto t0 = std::chrono::steady_clock::now();
    c.noalias() = a * b;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rep > 0 && s > 0) best = std::max(best, 2.0 * kSize * kSize * kSize / s);
  }
  if (!(c(0, 0) > 0) || !(best > 0)) return 1e9;  // never reached in practice: a rate that makes every estimate long
  return best;
}
}  // namespace

double host_dgemm_rate() {
  static const double rate = time_dgemm_rate();
  return rate;
}

double gemm_rate_of_kernels(const KernelOps& ops, Index size, int repeats) {
  const Index count = size * size;
  const std::unique_ptr<KernelArray> a = ops.alloc(count, "the GEMM rate's operands"),
                                     c = ops.alloc(count, "the GEMM rate's product");
  const std::vector<double> ones(static_cast<size_t>(count), 1.0);
  ops.upload(ones.data(), a->data(), count);
  double best = 0;
  for (int rep = 0; rep <= repeats; ++rep) {  // the first is a warm-up (library start-up, kernel selection)
    const auto t0 = std::chrono::steady_clock::now();
    ops.gemm(size, size, size, 0.5, {a->data(), size}, {a->data(), size}, 0.0, c->data(), size, 0, 1);
    const double top = ops.max_abs(c->data(), count);  // returns when the product is done
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (top != 0.5 * static_cast<double>(size))
      throw Error("internal: the GEMM rate's product is wrong", ErrorKind::Internal);
    if (rep > 0 && s > 0) best = std::max(best, 2.0 * static_cast<double>(size) * static_cast<double>(count) / s);
  }
  return best > 0 ? best : 1e9;  // a rate that makes every estimate long (never reached in practice)
}

}  // namespace gradflow
