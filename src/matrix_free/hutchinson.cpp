// hutchinson.cpp — batched Hutchinson estimates of ‖P_l‖_F and ‖B_l‖_F (see hutchinson.hpp).
#include "gradflow/matrix_free/hutchinson.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gradflow/core/rng.hpp"
#include "gradflow/matrix_free/device_chain.hpp"

namespace gradflow {

FrobeniusEstimate frobenius_from_probes(const Mat& stack, Index n, long exp2) {
  const Index K = n > 0 ? stack.rows() / n : 0, N = n * stack.cols();
  if (K == 0) return FrobeniusEstimate{};
  // copy i is rows [i·n, (i+1)·n): contiguous in row-major storage, so the stack is (K, N) as it lies
  const Eigen::Map<const Mat> Wr(stack.data(), K, N);
  return frobenius_from_gram(Wr * Wr.transpose(), exp2);  // (K, K): G_ii = ‖w_i‖², G_ij = w_i·w_j
}

FrobeniusEstimate frobenius_from_gram(const Mat& G, long exp2) {
  FrobeniusEstimate f;
  const Index K = G.rows();
  f.probes = K;
  if (K == 0) return f;
  const double mean = G.diagonal().mean();
  double T = 0;
  for (Index i = 0; i < K; ++i)
    for (Index j = i + 1; j < K; ++j) T += G(i, j) * G(i, j);
  const double pairs = 0.5 * static_cast<double>(K) * static_cast<double>(K - 1);
  const double se_mean = K > 1 ? std::sqrt(2.0 * (T / pairs) / static_cast<double>(K))
                               : std::numeric_limits<double>::quiet_NaN();
  const double v = std::sqrt(mean);
  const int e = static_cast<int>(std::max(-4000L, std::min(4000L, exp2)));
  f.value = std::ldexp(v, e);
  f.std_error = v > 0 ? std::ldexp(se_mean / (2 * v), e) : 0.0;
  f.log10_value = std::log10(v) + static_cast<double>(exp2) * std::log10(2.0);
  return f;
}

Mat rademacher(uint64_t seed, const std::string& stream, Index rows, Index cols) {
  Rng rng(seed, stream);
  Mat z(rows, cols);
  for (Index i = 0; i < rows; ++i)
    for (Index j = 0; j < cols; ++j) z(i, j) = (rng.next_u64() >> 63) ? 1.0 : -1.0;
  return z;
}

namespace {
// The probes of P_l's sweep and of B_l's own, and what their errors name: one definition for the CPU's sweep and the
// device chain's, which must draw the same numbers.
Mat product_probes(uint64_t seed, Index rows, Index cols) { return rademacher(seed, "hutchinson:product", rows, cols); }
Mat block_probes(uint64_t seed, Index l, Index rows, Index cols) {
  return rademacher(seed, "hutchinson:block:" + std::to_string(l), rows, cols);
}
std::string product_probes_name(Index l) { return product_jacobian_name(l) + " (Hutchinson probes)"; }
std::string block_probes_name(Index l) { return block_jacobian_name(l) + " (Hutchinson probes)"; }
}  // namespace

HutchinsonSweep hutchinson_frobenius(const Model& model, const Trace& trace, Index K, uint64_t seed, bool with_blocks,
                                     const std::function<void(Index)>& after_block) {
  const Index L = model.layers(), n = trace.x[0].rows(), d_out = trace.y.cols();
  HutchinsonSweep out;
  out.product.resize(static_cast<size_t>(L));
  if (with_blocks) out.block.resize(static_cast<size_t>(L));
  // W = P_lᵀ Z, carried from the top: first through the head (part of B_{L−1}), then block by block.
  Scaled W{product_probes(seed, K * n, d_out), 0};
  for (Index l = L - 1; l >= 0; --l) {
    // chain (l, l+1) is B_l, which for l = L−1 includes the head (jacobian_chain.hpp)
    const JacobianChain B(model, trace, l, l + 1, product_probes_name(l));
    W = B.vjp(std::move(W));
    out.product[static_cast<size_t>(l)] = frobenius_from_probes(W.m, n, W.exp2);
    if (with_blocks) {
      Scaled Y{block_probes(seed, l, K * n, B.out_width()), 0};
      const JacobianChain Bb(model, trace, l, l + 1, block_probes_name(l));
      Y = Bb.vjp(std::move(Y));
      out.block[static_cast<size_t>(l)] = frobenius_from_probes(Y.m, n, Y.exp2);
    }
    if (after_block) after_block(l);
  }
  return out;
}

HutchinsonSweep hutchinson_frobenius(DeviceChain& chain, Index K, uint64_t seed, bool with_blocks,
                                     const std::function<void(Index)>& after_block) {
  using S = CotangentStacks;
  const Index L = chain.layers(), n = chain.tokens();
  HutchinsonSweep out;
  out.product.resize(static_cast<size_t>(L));
  if (with_blocks) out.block.resize(static_cast<size_t>(L));
  // the CPU sweep's probes (the same streams), so both estimate the same sums
  chain.set_stack(S::kPStack, product_probes(seed, K * n, chain.out_width(L - 1)));
  long exp2 = 0;
  for (Index l = L - 1; l >= 0; --l) {
    chain.vjp(S::kPStack, l, product_probes_name(l));
    const Mat G = chain.gram(S::kPStack, &exp2);
    out.product[static_cast<size_t>(l)] = frobenius_from_gram(G, exp2);
    if (with_blocks) {
      chain.set_stack(S::kBStack, block_probes(seed, l, K * n, chain.out_width(l)));
      chain.vjp(S::kBStack, l, block_probes_name(l));
      const Mat Gb = chain.gram(S::kBStack, &exp2);
      out.block[static_cast<size_t>(l)] = frobenius_from_gram(Gb, exp2);
    }
    if (after_block) after_block(l);
  }
  return out;
}

}  // namespace gradflow
