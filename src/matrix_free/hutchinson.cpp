// hutchinson.cpp — batched Hutchinson estimates of ‖P_l‖_F and ‖B_l‖_F (see hutchinson.hpp).
#include "gradflow/matrix_free/hutchinson.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gradflow/core/cancel.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/core/rng.hpp"
#include "gradflow/matrix_free/device_chain.hpp"

namespace gradflow {

ProbeSums probe_sums(const Mat& G, long exp2) {
  ProbeSums s;
  s.probes = G.rows();
  s.exp2 = exp2;
  if (s.probes == 0) return s;
  s.diag_sum = G.diagonal().sum();
  for (Index i = 0; i < s.probes; ++i)
    for (Index j = i + 1; j < s.probes; ++j) s.pair_squares += G(i, j) * G(i, j);
  return s;
}

ProbeSums probe_sums_from_stack(const Mat& stack, Index n, long exp2) {
  const Index K = n > 0 ? stack.rows() / n : 0, N = n * stack.cols();
  if (K == 0) return ProbeSums{};
  // copy i is rows [i·n, (i+1)·n): contiguous in row-major storage, so the stack is (K, N) as it lies
  const Eigen::Map<const Mat> Wr(stack.data(), K, N);
  return probe_sums(Wr * Wr.transpose(), exp2);  // (K, K): G_ii = ‖w_i‖², G_ij = w_i·w_j
}

FrobeniusEstimate frobenius_from_sums(const std::vector<ProbeSums>& chunks) {
  FrobeniusEstimate f;
  long top = std::numeric_limits<long>::min();
  for (const ProbeSums& c : chunks)
    if (c.probes > 0) {
      f.probes += c.probes;
      top = std::max(top, c.exp2);
    }
  if (f.probes == 0) return f;
  // every chunk at the largest one's scale 2^top (one chunk: no rescaling, so its sums as they are)
  double diag = 0, T = 0, pairs = 0;
  for (const ProbeSums& c : chunks) {
    if (c.probes == 0) continue;
    const long shift = std::max(-100000L, c.exp2 - top);  // <= 0
    diag += std::ldexp(c.diag_sum, static_cast<int>(2 * shift));
    T += std::ldexp(c.pair_squares, static_cast<int>(4 * shift));
    pairs += 0.5 * static_cast<double>(c.probes) * static_cast<double>(c.probes - 1);
  }
  const double K = static_cast<double>(f.probes), mean = diag / K;
  const double se_mean = pairs > 0 ? std::sqrt(2.0 * (T / pairs) / K) : std::numeric_limits<double>::quiet_NaN();
  const double v = std::sqrt(mean);
  const int e = static_cast<int>(std::max(-4000L, std::min(4000L, top)));
  f.value = std::ldexp(v, e);
  f.std_error = v > 0 ? std::ldexp(se_mean / (2 * v), e) : 0.0;
  f.log10_value = std::log10(v) + static_cast<double>(top) * std::log10(2.0);
  return f;
}

FrobeniusEstimate frobenius_from_probes(const Mat& stack, Index n, long exp2) {
  return frobenius_from_sums({probe_sums_from_stack(stack, n, exp2)});
}

FrobeniusEstimate frobenius_from_gram(const Mat& G, long exp2) { return frobenius_from_sums({probe_sums(G, exp2)}); }

Mat rademacher(uint64_t seed, const std::string& stream, Index rows, Index cols, Index first_row) {
  Rng rng(seed, stream);
  rng.discard(static_cast<uint64_t>(first_row) * static_cast<uint64_t>(cols));
  Mat z(rows, cols);
  for (Index i = 0; i < rows; ++i)
    for (Index j = 0; j < cols; ++j) z(i, j) = (rng.next_u64() >> 63) ? 1.0 : -1.0;
  return z;
}

HutchinsonSweep hutchinson_from_chunks(const std::vector<ProbeChunk>& chunks, Index layers, bool with_blocks) {
  HutchinsonSweep out;
  for (size_t c = 0; c < chunks.size(); ++c)
    if (chunks[c].chunk != static_cast<Index>(c) || static_cast<Index>(chunks[c].product.size()) != layers ||
        static_cast<Index>(chunks[c].block.size()) != (with_blocks ? layers : 0))
      throw Error("internal: Hutchinson chunk records out of order or of another depth", ErrorKind::Internal);
  const auto estimate = [&](Index l, bool block) {
    std::vector<ProbeSums> sums;
    for (const ProbeChunk& c : chunks) sums.push_back((block ? c.block : c.product)[static_cast<size_t>(l)]);
    return frobenius_from_sums(sums);
  };
  for (Index l = 0; l < layers; ++l) {
    out.product.push_back(estimate(l, false));
    if (with_blocks) out.block.push_back(estimate(l, true));
  }
  return out;
}

namespace {
// The probes of P_l's sweep and of B_l's own, and what their errors name: one definition for the CPU's sweep and the
// device chain's, which must draw the same numbers. Probe i is rows [i·n, (i+1)·n) of its stream.
Mat product_probes(uint64_t seed, const ProbeChunking& pc, Index c, Index n, Index cols) {
  return rademacher(seed, "hutchinson:product", pc.count(c) * n, cols, pc.first(c) * n);
}
Mat block_probes(uint64_t seed, Index l, const ProbeChunking& pc, Index c, Index n, Index cols) {
  return rademacher(seed, "hutchinson:block:" + std::to_string(l), pc.count(c) * n, cols, pc.first(c) * n);
}
std::string product_probes_name(Index l) { return product_jacobian_name(l) + " (Hutchinson probes)"; }
std::string block_probes_name(Index l) { return block_jacobian_name(l) + " (Hutchinson probes)"; }

// The chunks a sweep runs: all of them, or a part's range (checked against the chunking).
std::pair<Index, Index> chunks_to_run(const ProbeChunking& pc, ChunkRange range) {
  if (range.whole()) return {0, pc.chunks()};
  if (range.begin < 0 || range.end < range.begin || range.end > pc.chunks())
    throw Error("internal: Hutchinson chunks [" + std::to_string(range.begin) + ", " + std::to_string(range.end) +
                    ") outside the sweep's " + std::to_string(pc.chunks()),
                ErrorKind::Internal);
  return {range.begin, range.end};
}

// The sweep over chunks, whatever runs one chunk's stacks (`run_chunk` fills a record's sums layer by layer).
HutchinsonSweep sweep_chunks(Index L, Index K, Index per_chunk, bool with_blocks, ChunkRange range,
                             const std::function<void(Index, ProbeChunk&)>& run_chunk) {
  const ProbeChunking pc(K, per_chunk);
  const auto [begin, end] = chunks_to_run(pc, range);
  std::vector<ProbeChunk> records;
  for (Index c = begin; c < end; ++c) {
    ProbeChunk r;
    r.chunk = c;
    r.product.resize(static_cast<size_t>(L));
    if (with_blocks) r.block.resize(static_cast<size_t>(L));
    run_chunk(c, r);
    records.push_back(std::move(r));
  }
  if (!range.whole()) {
    HutchinsonSweep out;
    out.part = std::move(records);
    return out;
  }
  return hutchinson_from_chunks(records, L, with_blocks);
}
}  // namespace

HutchinsonSweep hutchinson_frobenius(const Model& model, const Trace& trace, Index K, uint64_t seed, bool with_blocks,
                                     const std::function<void(Index, Index)>& after_block, Index per_chunk,
                                     ChunkRange range) {
  const Index L = model.layers(), n = trace.x[0].rows(), d_out = trace.y.cols();
  const ProbeChunking pc(K, per_chunk);
  return sweep_chunks(L, K, per_chunk, with_blocks, range, [&](Index c, ProbeChunk& r) {
    // W = P_lᵀ Z, carried from the top: first through the head (part of B_{L−1}), then block by block.
    Scaled W{product_probes(seed, pc, c, n, d_out), 0};
    for (Index l = L - 1; l >= 0; --l) {
      check_cancel();  // a front end asked to stop (core/cancel.hpp)
      // chain (l, l+1) is B_l, which for l = L−1 includes the head (jacobian_chain.hpp)
      const JacobianChain B(model, trace, l, l + 1, product_probes_name(l));
      W = B.vjp(std::move(W));
      r.product[static_cast<size_t>(l)] = probe_sums_from_stack(W.m, n, W.exp2);
      if (with_blocks) {
        Scaled Y{block_probes(seed, l, pc, c, n, B.out_width()), 0};
        const JacobianChain Bb(model, trace, l, l + 1, block_probes_name(l));
        Y = Bb.vjp(std::move(Y));
        r.block[static_cast<size_t>(l)] = probe_sums_from_stack(Y.m, n, Y.exp2);
      }
      if (after_block) after_block(l, pc.count(c));
    }
  });
}

HutchinsonSweep hutchinson_frobenius(DeviceChain& chain, Index K, uint64_t seed, bool with_blocks,
                                     const std::function<void(Index, Index)>& after_block, Index per_chunk,
                                     ChunkRange range) {
  using S = CotangentStacks;
  const Index L = chain.layers(), n = chain.tokens();
  const ProbeChunking pc(K, per_chunk);
  return sweep_chunks(L, K, per_chunk, with_blocks, range, [&](Index c, ProbeChunk& r) {
    // the CPU sweep's probes (the same streams), so both estimate the same sums
    chain.set_stack(S::kPStack, product_probes(seed, pc, c, n, chain.out_width(L - 1)));
    long exp2 = 0;
    for (Index l = L - 1; l >= 0; --l) {
      check_cancel();  // a front end asked to stop (core/cancel.hpp)
      chain.vjp(S::kPStack, l, product_probes_name(l));
      const Mat G = chain.gram(S::kPStack, &exp2);
      r.product[static_cast<size_t>(l)] = probe_sums(G, exp2);
      if (with_blocks) {
        chain.set_stack(S::kBStack, block_probes(seed, l, pc, c, n, chain.out_width(l)));
        chain.vjp(S::kBStack, l, block_probes_name(l));
        const Mat Gb = chain.gram(S::kBStack, &exp2);
        r.block[static_cast<size_t>(l)] = probe_sums(Gb, exp2);
      }
      if (after_block) after_block(l, pc.count(c));
    }
  });
}

}  // namespace gradflow
