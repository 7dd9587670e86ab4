// jacobian_chains.hpp — the Jacobian chains the streamed and matrix-free analyses run on, made from the context in
// this one place, so neither analysis knows which backend it runs on: the model's own VJPs/JVPs on host matrices when
// the run's backend computes on the host (Backend::on_host), else the same chain as a program of the backend's kernels
// (matrix_free/device_chain.hpp: the weights and trace uploaded once, the stacks kept in the backend's memory).
// AnalysisOptions::kernel_chain asks for the kernels' chain on the CPU too (tests of the device path end to end).
// (A helper of analyses/, not an analysis: run/ does not include matrix_free/.)
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "gradflow/matrix_free/device_chain.hpp"
#include "gradflow/matrix_free/hutchinson.hpp"
#include "gradflow/matrix_free/jacobian_chain.hpp"
#include "gradflow/matrix_free/streamed.hpp"
#include "gradflow/run/context.hpp"

namespace gradflow {

class JacobianChains {
 public:
  // Refuses (Error, exit code 2), before any work, a model whose units the kernels' chain does not cover yet, when
  // the run would use that chain (`engine`: the mode named in the message).
  static void check_covered(const Model& model, const AnalysisOptions& opts, const Backend& backend, Engine engine);
  // The kernels' chain, when the run uses it, holds up to `max_copies` stacked cotangents.
  JacobianChains(const AnalysisContext& ctx, Index max_copies);

  // Exact ‖P_l‖_F, ‖B_l‖_F from K identity rows at a time (matrix_free/streamed.hpp); a part: `range`'s chunks.
  StreamedSweep streamed(Index K, bool with_blocks, const std::function<void(Index, Index)>& after_block,
                         ChunkRange range = {});
  // Hutchinson's K probes, per_chunk at a time (matrix_free/hutchinson.hpp; per_chunk <= max_copies); a part:
  // `range`'s chunks.
  HutchinsonSweep hutchinson(Index K, uint64_t seed, bool with_blocks,
                             const std::function<void(Index, Index)>& after_block, Index per_chunk,
                             ChunkRange range = {});
  // dx_to/dx_from as an operator for Lanczos (matrix_free/chain_singular.hpp); `what` names it in errors.
  std::unique_ptr<ChainOperator> chain(Index from, Index to, std::string what);

 private:
  static bool on_kernels(const AnalysisOptions& opts, const Backend& backend);
  const AnalysisContext& ctx_;
  std::unique_ptr<DeviceChain> kernels_;  // null: the model's own VJPs/JVPs
};

}  // namespace gradflow
