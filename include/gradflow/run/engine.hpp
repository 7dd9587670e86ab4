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
// streamed_seconds_estimate <= --max-time (at the run's backend's GEMM rate, Backend::gemm_rate: measured once per
// process, ~30 ms on the CPU); otherwise matrix-free. `backend` is the run's (opts.backend's kind), asked only by auto:
// with a device (--device cuda) auto's explicit also needs explicit_device_bytes to fit the device's free memory
// (Backend::free_memory), and streamed's time is estimated at the device's GEMM rate; a device that cannot be built
// here (a plan written on a login node) is said so in the reason, and the run chooses again on its node.
EngineChoice choose_engine(const ModelConfig& cfg, const AnalysisOptions& opts, const RunBackend& backend);

// Whether a run of `engine` holds the model's weight matrices one block at a time (model/block_weights.hpp):
// gradients-only mode on the CPU with opts.weights_per_block, from a seeded initialization (no checkpoint) without a
// data-dependent step (Admin's profile), and no perturbed forward passes (--sensitivity-probes).
bool weights_per_block(const ModelConfig& cfg, const AnalysisOptions& opts, Engine engine, bool from_checkpoint);

// --spectral-layers: "all" | "none" | "bottom" | "top" | comma-separated indices "0,6,12" (each in 0..L-1).
// Returns the ascending, de-duplicated layer list; Error(BadInput) naming the option otherwise.
std::vector<Index> parse_spectral_layers(const std::string& text, Index layers);

}  // namespace gradflow
