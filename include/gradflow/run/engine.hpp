// engine.hpp — which engine `analyze` runs, chosen in one place with its memory estimate (options.hpp: Engine):
// explicit Jacobians (dense (N, N) matrices, N = n·d, exact SVDs), matrix-free operators (JVP/VJP only) or
// gradients only, or streamed exact Frobenius norms. auto picks explicit when its estimated peak memory (~7·N²·8 bytes +
// parameters + trace) fits in --max-memory; above it, streamed when its memory fits and its estimated time
// (time_estimate.hpp) fits --max-time, else matrix-free. A run whose chosen engine does not fit is refused here, before anything is allocated.
// docs/scaling.md gives the costs of each engine.
#pragma once
#include <string>
#include <vector>

#include "gradflow/backend/backend.hpp"
#include "gradflow/run/memory_estimate.hpp"
#include "gradflow/run/options.hpp"
#include "gradflow/model/config.hpp"

namespace gradflow {

struct EngineChoice {
  Engine engine = Engine::Explicit;
  std::string reason;        // one sentence for config.mode_reason
  double explicit_bytes = 0;  // explicit_memory_estimate of this model
  double budget_bytes = 0;    // --max-memory, or half of RAM
  // set when auto weighed streamed mode (explicit did not fit): its estimated seconds and the DGEMM rate (flop/s)
  bool streamed_considered = false;
  double streamed_seconds = 0;
  double dgemm_rate = 0;
};

// Decides the engine for opts.engine_request, validates the engine options (--seq-len, --top-k,
// --hutchinson-probes, --spectral-layers, --spectrum with matrix-free) and refuses (Error, exit code 2) a run whose
// chosen engine needs more than the budget: explicit_memory_estimate for explicit, streaming_memory_estimate for
// matrix-free and gradients-only, streamed_memory for streamed. No allocation. auto: explicit iff
// explicit_memory_estimate <= budget (ties go to explicit); otherwise streamed iff streamed_memory fits the budget and
// streamed_seconds_estimate <= --max-time (this measures the DGEMM rate once: ~30 ms); otherwise matrix-free.
// With a device backend (--device cuda) auto's explicit also needs explicit_device_bytes to fit the device's free
// memory (asked of the device: Backend::free_memory), and streamed's time is estimated at the device's GEMM rate.
EngineChoice choose_engine(const ModelConfig& cfg, const AnalysisOptions& opts);

// The explicit walk's peak in the backend's memory: P_{l+1}, the product, B_l as given and dense, and one copy or
// Gram matrix for a norm or spectrum: 5 (N, N) matrices (the solvers' workspaces are checked when allocated).
double explicit_device_bytes(const ModelConfig& cfg, Index n_tokens);

// Estimated peak host memory of the explicit Jacobian analysis of this model at n tokens: the parameters, the
// forward trace (memory_estimate.hpp) and the (N, N) matrices the host holds: 7 on the CPU; with a device backend 2
// (each B_l is built on the host, then copied; the products and their copies live on the device, which checks its
// own memory: Backend::require_memory). The _estimate functions return the CPU total in bytes.
MemoryEstimate explicit_memory(const ModelConfig& cfg, Index n_tokens, BackendKind backend = BackendKind::Cpu);
double explicit_memory_estimate(const ModelConfig& cfg, Index n_tokens);
// The layers whose norms and spectra the CPU's explicit walk computes at once, one thread each (host copies of their
// B_l and P_l): kExplicitConcurrentLayers, which explicit_memory counts, or fewer threads; with more threads, as many
// more as `budget_bytes` (--max-memory; 0: its default) holds beyond explicit_memory_estimate at 2 (N, N) matrices
// each, but only for a configuration that runs alone: called inside an active parallel region (a runner's worker
// beside other configurations, whose memory adds up) it stays at kExplicitConcurrentLayers. The numbers do not
// depend on it: each layer's are the same single-threaded calls.
inline constexpr int kExplicitConcurrentLayers = 2;
int explicit_concurrent_layers(const ModelConfig& cfg, Index n_tokens, double budget_bytes, int threads);
// Estimated peak memory (bytes) of the engines that never form an (N, N) matrix (matrix-free, gradients-only):
// the forward trace (dominated by h·n² attention probabilities per block) plus `probes` stacked probe vectors.
MemoryEstimate streaming_memory(const ModelConfig& cfg, Index n_tokens, Index probes);
double streaming_memory_estimate(const ModelConfig& cfg, Index n_tokens, Index probes);

// Estimated peak memory of streamed mode with chunks of `rows` identity rows (clamped to N): streaming_memory for
// `rows` stacked cotangents plus the chunk and its two images (3·rows·N doubles).
MemoryEstimate streamed_memory(const ModelConfig& cfg, Index n_tokens, Index rows);

// --spectral-layers: "all" | "none" | "bottom" | "top" | comma-separated indices "0,6,12" (each in 0..L-1).
// Returns the ascending, de-duplicated layer list; Error(BadInput) naming the option otherwise.
std::vector<Index> parse_spectral_layers(const std::string& text, Index layers);

}  // namespace gradflow
