// memory_estimate.hpp — what each command will hold at its peak, counted from the configuration before anything
// is allocated, so a run that cannot fit is refused with its size and the fix instead of growing until the kernel
// kills it (issue 13). Every part is named: parameters, their gradients and the optimizer's state, the forward
// trace, dense Jacobians, probe vectors, output buffers. Estimates, not measurements: they count the arrays the
// code keeps, not the allocator's overhead (docs/scaling.md).
#pragma once
#include <string>
#include <vector>

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

}  // namespace gradflow
