// time_estimate.cpp — see time_estimate.hpp.
#include "gradflow/run/time_estimate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "gradflow/core/error.hpp"
#include "gradflow/run/memory_estimate.hpp"

namespace gradflow {

double block_vjp_flops(const ModelConfig& cfg, Index n_tokens) {
  const double n = static_cast<double>(n_tokens), d = static_cast<double>(cfg.d_model);
  const double ff = static_cast<double>(cfg.ff());
  return 2.0 * n * (4.0 * d * d + 2.0 * d * ff) + 8.0 * n * n * d;
}

double streamed_flops(const ModelConfig& cfg, Index n_tokens, bool with_blocks) {
  const double N = static_cast<double>(n_tokens) * static_cast<double>(cfg.d_model);
  // N rows of P_l and (with_blocks) the state's rows of B_l (two streams: 2N), each through one block per layer
  const double rows = N + (with_blocks ? N * static_cast<double>(state_streams(cfg)) : 0.0);
  return rows * static_cast<double>(cfg.layers) * block_vjp_flops(cfg, n_tokens);
}

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

double measured_dgemm_rate() {
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

double measured_dgemm_rate(BackendKind backend) {
  if (backend == BackendKind::Cpu) return measured_dgemm_rate();
  static const double rate = gemm_rate_of_kernels(make_backend(backend)->kernels(), 4096);
  return rate;
}

double streamed_seconds_estimate(const ModelConfig& cfg, Index n_tokens, double dgemm_rate, bool with_blocks) {
  return streamed_flops(cfg, n_tokens, with_blocks) / (kStreamedDgemmFraction * dgemm_rate);
}

double parse_duration(const std::string& text, const std::string& option) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  const std::string suffix(end ? end : "");
  double mult = -1;
  if (suffix.empty() || suffix == "s") mult = 1;
  else if (suffix == "m" || suffix == "min") mult = 60;
  else if (suffix == "h") mult = 3600;
  require(end != text.c_str() && mult > 0 && std::isfinite(v) && v > 0,
          option + " '" + text + "' is not a duration; fix: e.g. " + option + " 600, " + option + " 10m or " +
              option + " 2h");
  return v * mult;
}

std::string format_seconds(double s) {
  char buf[64];
  if (s < 120) std::snprintf(buf, sizeof buf, "%.3g s", s);
  else if (s < 7200) std::snprintf(buf, sizeof buf, "%.3g min", s / 60);
  else if (s < 3 * 86400) std::snprintf(buf, sizeof buf, "%.3g h", s / 3600);
  else std::snprintf(buf, sizeof buf, "%.3g days", s / 86400);
  return buf;
}

}  // namespace gradflow
