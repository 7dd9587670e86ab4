// memory_estimate.hpp — what each command will hold at its peak, counted from the configuration before anything
// is allocated, so a run that cannot fit is refused with its size and the fix instead of growing until the kernel
// kills it (issue 13). Every part is named: parameters, their gradients and the optimizer's state, the forward
// trace, dense Jacobians, probe vectors, output buffers. Estimates, not measurements: they count the arrays the
// code keeps, not the allocator's overhead (docs/scaling.md).
#pragma once
#include <string>
#include <vector>

#include "gradflow/backend/backend.hpp"
#include "gradflow/core/types.hpp"
#include "gradflow/io/checkpoint.hpp"
#include "gradflow/model/config.hpp"

namespace gradflow {

struct MemoryEstimate {
  struct Part {
    std::string what;
    double bytes = 0;
  };
  std::vector<Part> parts;
  MemoryEstimate& add(std::string what, double bytes);
  double total() const;
  // "about 12.3 GiB (parameters 4.1 GiB, forward trace 8.2 GiB)": the parts above 1 % of the total, largest first.
  std::string describe() const;
};

// Parameters of the Transformer body (the blocks and the final norm): counted from the placement's recipe
// without building the model; at least Model(cfg).params().numel() and within a few d per block of it.
double body_parameter_count(const ModelConfig& cfg);
// The streams of the state between blocks: 2 for a two-stream scheme (ResiDual's [x_a | x_d]), else 1.
Index state_streams(const ModelConfig& cfg);
// Doubles of one forward trace of the body at n tokens plus its dL/dx_l (what a forward + backward keeps).
double trace_doubles(const ModelConfig& cfg, Index n_tokens);

// The peak of reading a --weights checkpoint (CheckpointLoad, from its headers): the block stack's tensors and the
// embeddings in double, one tensor being built and the read buffer. Checked before any tensor data is read.
MemoryEstimate checkpoint_load_memory(const CheckpointLoad& load);
// Adds what the checkpoint read keeps during a run (AnalysisOptions::checkpoint_bytes, 0: none) to `m`.
MemoryEstimate& add_checkpoint_kept(MemoryEstimate& m, double checkpoint_bytes);

// Throws Error(BadInput): "<command> needs about X (parts), more than the Y allowed (--max-memory ...); fix: <fix>"
// when the estimate exceeds the budget (0: the default, half of RAM).
void require_memory(const MemoryEstimate& need, double budget_bytes, const std::string& command, const std::string& fix);

// The engines' estimates (engine.hpp refuses by them):
// the explicit walk's peak in the backend's memory: P_{l+1}, the product, B_l as given and dense, and one copy or
// Gram matrix for a norm or spectrum: 5 (N, N) matrices (the solvers' workspaces are checked when allocated).
double explicit_device_bytes(const ModelConfig& cfg, Index n_tokens);

// Estimated peak host memory of the explicit Jacobian analysis of this model at n tokens: the parameters, the
// forward trace (trace_doubles) and the (N, N) matrices the host holds: 7 on the CPU; with a device backend 2
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
// the forward trace (dominated by h·n² attention probabilities per block) plus `probes` stacked probe vectors;
// weights_per_block: the weights of one block at a time (engine.hpp: weights_per_block) instead of all of them.
MemoryEstimate streaming_memory(const ModelConfig& cfg, Index n_tokens, Index probes, bool weights_per_block = false);
// What a --precision run adds to the gradients-only run's memory (streaming_memory with probes 0): the float64
// parameter gradients it keeps, the low-precision model's parameters and trace (run/precision_compare.hpp).
void add_precision_memory(MemoryEstimate& m, const ModelConfig& cfg, Index n_tokens, bool weights_per_block);
double streaming_memory_estimate(const ModelConfig& cfg, Index n_tokens, Index probes);

// Estimated peak memory of streamed mode with chunks of `rows` identity rows (clamped to N): streaming_memory for
// `rows` stacked cotangents plus the chunk and its two images (3·rows·N doubles).
MemoryEstimate streamed_memory(const ModelConfig& cfg, Index n_tokens, Index rows);

}  // namespace gradflow
