// jacobian_chains.cpp — see jacobian_chains.hpp.
#include "jacobian_chains.hpp"

#include "gradflow/core/error.hpp"

namespace gradflow {

bool JacobianChains::on_kernels(const AnalysisOptions& opts, const Backend& backend) {
  return !backend.on_host() || opts.kernel_chain;
}

void JacobianChains::check_covered(const Model& model, const AnalysisOptions& opts, const Backend& backend,
                                   Engine engine) {
  if (!on_kernels(opts, backend)) return;
  const std::string lacks = DeviceChain::unsupported(model);
  require(lacks.empty(), "--device " + std::string(to_string(backend.kind())) + " --mode " + to_string(engine) +
                             " does not cover " + lacks + " yet (placement " + model.config().placement +
                             "); fix: use --device cpu, or --mode explicit on the device");
}

JacobianChains::JacobianChains(const AnalysisContext& ctx, Index max_copies) : ctx_(ctx) {
  if (on_kernels(ctx.opts, ctx.backend()))
    kernels_ = std::make_unique<DeviceChain>(ctx.backend().kernels(), ctx.model, ctx.trace, max_copies);
}

StreamedSweep JacobianChains::streamed(Index K, bool with_blocks,
                                       const std::function<void(Index, Index)>& after_block, ChunkRange range) {
  if (kernels_) return streamed_frobenius(*kernels_, K, with_blocks, after_block, range);
  return streamed_frobenius(ctx_.model, ctx_.trace, K, with_blocks, after_block, range);
}

HutchinsonSweep JacobianChains::hutchinson(Index K, uint64_t seed, bool with_blocks,
                                           const std::function<void(Index, Index)>& after_block, Index per_chunk,
                                           ChunkRange range) {
  if (kernels_) return hutchinson_frobenius(*kernels_, K, seed, with_blocks, after_block, per_chunk, range);
  return hutchinson_frobenius(ctx_.model, ctx_.trace, K, seed, with_blocks, after_block, per_chunk, range);
}

std::unique_ptr<ChainOperator> JacobianChains::chain(Index from, Index to, std::string what) {
  if (kernels_) return std::make_unique<DeviceChainOperator>(*kernels_, from, to, std::move(what));
  return std::make_unique<JacobianChain>(ctx_.model, ctx_.trace, from, to, std::move(what));
}

}  // namespace gradflow
