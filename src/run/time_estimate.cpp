// time_estimate.cpp — see time_estimate.hpp.
#include "gradflow/run/time_estimate.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <omp.h>

#include "gradflow/backend/backend.hpp"
#include "gradflow/core/decimal.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/run/memory_estimate.hpp"

namespace gradflow {

double block_vjp_flops(const ModelConfig& cfg, Index n_tokens) {
  const double n = static_cast<double>(n_tokens), d = static_cast<double>(cfg.d_model);
  const double ff = static_cast<double>(cfg.ff());
  const double ff_mats = cfg.gated() ? 3.0 : 2.0;  // linear1, linear2 (and a gated branch's linear3)
  return 2.0 * n * (4.0 * d * d + ff_mats * d * ff) + 8.0 * n * n * d;
}

double streamed_flops(const ModelConfig& cfg, Index n_tokens, bool with_blocks) {
  const double N = static_cast<double>(n_tokens) * static_cast<double>(cfg.d_model);
  // N rows of P_l and (with_blocks) the state's rows of B_l (two streams: 2N), each through one block per layer
  const double rows = N + (with_blocks ? N * static_cast<double>(state_streams(cfg)) : 0.0);
  return rows * static_cast<double>(cfg.layers) * block_vjp_flops(cfg, n_tokens);
}

double streamed_seconds_estimate(const ModelConfig& cfg, Index n_tokens, double dgemm_rate, bool with_blocks) {
  return streamed_flops(cfg, n_tokens, with_blocks) / (kStreamedDgemmFraction * dgemm_rate);
}

namespace {
// `flops` at kStreamedDgemmFraction of this machine's DGEMM rate, on its threads
StreamedCost cost_here(double flops) {
  StreamedCost c;
  c.flops = flops;
  c.dgemm_rate = host_dgemm_rate();
  c.seconds = flops / (kStreamedDgemmFraction * c.dgemm_rate);
  c.threads = omp_get_max_threads();
  return c;
}
}  // namespace

StreamedCost streamed_cost_here(const ModelConfig& cfg, Index n_tokens, bool with_blocks) {
  return cost_here(streamed_flops(cfg, n_tokens, with_blocks));
}

Index lanczos_block_passes(Index layers, const std::vector<Index>& spectral) {
  Index passes = spectral.empty() ? 0 : 4 * kExpectedLanczosOps * layers;  // ‖B_l‖₂ and ‖B_l − I‖₂
  for (Index l : spectral) passes += 2 * kExpectedLanczosOps * (layers - l);
  return passes;
}

double matrix_free_flops(const ModelConfig& cfg, Index n_tokens, Index probes, const std::vector<Index>& spectral) {
  const double passes = 2.0 * static_cast<double>(probes) * static_cast<double>(cfg.layers) +
                        static_cast<double>(lanczos_block_passes(cfg.layers, spectral));
  return passes * block_vjp_flops(cfg, n_tokens);
}

StreamedCost matrix_free_cost_here(const ModelConfig& cfg, Index n_tokens, Index probes,
                                   const std::vector<Index>& spectral) {
  return cost_here(matrix_free_flops(cfg, n_tokens, probes, spectral));
}

double parse_duration(const std::string& text, const std::string& option) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  const std::string suffix(end ? end : "");
  double mult = -1;
  if (suffix.empty() || suffix == "s") mult = 1;
  else if (suffix == "m" || suffix == "min") mult = 60;
  else if (suffix == "h") mult = 3600;
  // a decimal number only: strtod also reads hexadecimal (0x10), "inf" and leading blanks
  const std::string number = text.substr(0, text.size() - suffix.size());
  const bool decimal = is_decimal_number(number, false);
  require(decimal && end != text.c_str() && mult > 0 && std::isfinite(v * mult) && v > 0,
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
