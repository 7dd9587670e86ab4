// time_estimate.hpp — how long an engine will take, estimated before it runs, so --mode auto can choose streamed
// mode only when it fits --max-time (issue 12): the engine's flop count (docs/scaling.md) over the GEMM rate of the
// run's backend (Backend::gemm_rate), measured once per process by a short product. An estimate, not a promise: the
// rate moves with the load of the machine, so a run whose estimate lies near --max-time may choose differently on
// another run (its report's config.time_estimate says what was estimated).
#pragma once
#include <string>
#include <vector>

#include "gradflow/core/types.hpp"
#include "gradflow/model/config.hpp"

namespace gradflow {

// Floating-point operations of one cotangent through one block's input-VJP: the linear layers
// (2·n·(4·d² + 2·d·d_ff), 3·d·d_ff for a gated feed-forward) and attention's four (n, n)·(n, d/h) products per head (8·n²·d).
double block_vjp_flops(const ModelConfig& cfg, Index n_tokens);
// Floating-point operations of --mode streamed: N = n·d cotangents through every block for P_l, and (with_blocks,
// --stream-blocks on) the state's n·width for B_l.
double streamed_flops(const ModelConfig& cfg, Index n_tokens, bool with_blocks = true);

// The fraction of the DGEMM rate the streamed engine reaches (measured, docs/scaling.md), used by the estimate.
inline constexpr double kStreamedDgemmFraction = 0.4;
// Estimated seconds of --mode streamed on this machine: streamed_flops / (kStreamedDgemmFraction · rate).
double streamed_seconds_estimate(const ModelConfig& cfg, Index n_tokens, double dgemm_rate, bool with_blocks = true);

// What a streamed run costs on this machine's CPU, for a plan that splits it (analyze --plan; `gradflow slurm` prints
// it): streamed_seconds_estimate at the host's DGEMM rate (measured once per process on its `threads` threads), and
// the core-hours that makes (seconds · threads). An estimate where the plan was written, not where the tasks run.
struct StreamedCost {
  double flops = 0, dgemm_rate = 0, seconds = 0;
  int threads = 1;
  double core_hours() const { return seconds * threads / 3600.0; }
};
StreamedCost streamed_cost_here(const ModelConfig& cfg, Index n_tokens, bool with_blocks);

// Lanczos's expected applications of JᵀJ per operator (an estimate: progress lines and the plan's cost only).
inline constexpr Index kExpectedLanczosOps = 40;
// Lanczos's expected tangents through one block for a run's singular values: 4·kExpectedLanczosOps per B_l for ‖B_l‖₂
// and ‖B_l − I‖₂ when any layer is spectral, 2·kExpectedLanczosOps·(L − l) per spectral P_l.
Index lanczos_block_passes(Index layers, const std::vector<Index>& spectral);
// Floating-point operations of --mode matrix-free: K probes through every block for P_l and through its own block for
// B_l (2·K·L block VJPs), and lanczos_block_passes.
double matrix_free_flops(const ModelConfig& cfg, Index n_tokens, Index probes, const std::vector<Index>& spectral);
// The same cost as streamed_cost_here for a matrix-free run split into tasks (at kStreamedDgemmFraction of the rate:
// a chunk of probes is a stack like a chunk of identity rows).
StreamedCost matrix_free_cost_here(const ModelConfig& cfg, Index n_tokens, Index probes,
                                   const std::vector<Index>& spectral);

// Parses durations like "600", "90s", "10m", "1.5h" (seconds); Error naming the option on anything else.
double parse_duration(const std::string& text, const std::string& option);
// "42 s", "12.5 min", "3.2 h", "4.1 days"
std::string format_seconds(double seconds);

}  // namespace gradflow
