// streamed.cpp — exact ‖P_l‖_F and ‖B_l‖_F from chunks of identity rows pushed down the VJP chain (streamed.hpp).
#include "gradflow/matrix_free/streamed.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gradflow/core/error.hpp"

namespace gradflow {
namespace {
int clamp_exp(long e) { return static_cast<int>(std::max(-100000L, std::min(100000L, e))); }
}  // namespace

void SquareSum::add(double value, long value_exp2) {
  if (!(value > 0)) return;
  int e = 0;
  const double f = std::frexp(value, &e);  // value = f·2^e, f in [0.5, 1)
  const long ve = value_exp2 + e;
  if (mantissa == 0) {
    mantissa = f;
    exp2 = ve;
    return;
  }
  const long top = std::max(exp2, ve);
  mantissa = std::ldexp(mantissa, clamp_exp(exp2 - top)) + std::ldexp(f, clamp_exp(ve - top));
  exp2 = top;
  int m = 0;
  mantissa = std::frexp(mantissa, &m);  // keep the mantissa in [0.5, 1): exact
  exp2 += m;
}

double SquareSum::value() const { return mantissa == 0 ? 0.0 : std::ldexp(mantissa, clamp_exp(exp2)); }

double SquareSum::log10() const {
  return mantissa == 0 ? -std::numeric_limits<double>::infinity()
                       : std::log10(mantissa) + static_cast<double>(exp2) * std::log10(2.0);
}

ExactNorm exact_norm_from(const SquareSum& s, Index N, Index cols) {
  ExactNorm r;
  const double lg = s.log10();
  r.log10_value = 0.5 * lg;
  if (s.mantissa == 0) return r;
  // sqrt(m·2^e) = sqrt(m·2^(e mod 2))·2^(e div 2), exact halving of the exponent
  const long half = s.exp2 >= 0 ? s.exp2 / 2 : -((-s.exp2 + 1) / 2);
  const double m = std::ldexp(s.mantissa, static_cast<int>(s.exp2 - 2 * half));  // exponent 0 or 1
  r.value = std::ldexp(std::sqrt(m), clamp_exp(half));
  const double dN = static_cast<double>(N);
  r.mean_sq_singular = s.value() / dN;
  r.rms_gain = r.value / std::sqrt(static_cast<double>(cols > 0 ? cols : N));
  if (!std::isfinite(r.mean_sq_singular) || r.mean_sq_singular == 0)  // the sum overflows or underflows alone
    r.mean_sq_singular = std::pow(10.0, lg - std::log10(dN));
  return r;
}

std::string streamed_block_name(Index l) { return block_jacobian_name(l) + " (streamed identity rows)"; }

namespace {

// The model's own VJPs (JacobianChain (l, l+1) is B_l, the head included for l = L−1) on host matrices.
class HostStacks final : public CotangentStacks {
 public:
  HostStacks(const Model& model, const Trace& trace) : model_(model), trace_(trace) {
    const Index L = model.layers();
    chains_.reserve(static_cast<size_t>(L));
    for (Index l = 0; l < L; ++l)
      chains_.emplace_back(model, trace, l, l + 1, streamed_block_name(l));
  }
  Index layers() const override { return model_.layers(); }
  Index tokens() const override { return trace_.x[0].rows(); }
  Index state_width() const override { return trace_.x[0].cols(); }
  Index out_width(Index l) const override { return chains_[static_cast<size_t>(l)].out_width(); }
  void set_identity(int stack, Index start, Index k, Index w) override {
    // row r is the (n, w) cotangent with a 1 at ((start + r) / w, (start + r) % w)
    Scaled& s = stacks_[stack];
    const Index n = tokens();
    s.m.setZero(k * n, w);
    s.exp2 = 0;
    for (Index r = 0; r < k; ++r) s.m(r * n + (start + r) / w, (start + r) % w) = 1.0;
  }
  void vjp(int stack, Index l) override {
    stacks_[stack] = chains_[static_cast<size_t>(l)].vjp(std::move(stacks_[stack]));
  }
  void add_squares(int stack, SquareSum& sum) const override {
    sum.add(stacks_[stack].m.squaredNorm(), 2 * stacks_[stack].exp2);
  }

 private:
  const Model& model_;
  const Trace& trace_;
  std::vector<JacobianChain> chains_;
  Scaled stacks_[2];
};

}  // namespace

StreamedSweep streamed_frobenius(const Model& model, const Trace& trace, Index K, bool with_blocks,
                                 const std::function<void(Index, Index)>& after_block) {
  HostStacks stacks(model, trace);
  return streamed_frobenius(stacks, K, with_blocks, after_block);
}

StreamedSweep streamed_frobenius(CotangentStacks& e, Index K, bool with_blocks,
                                 const std::function<void(Index, Index)>& after_block) {
  if (K < 1) throw Error("internal: streamed_frobenius with K = " + std::to_string(K), ErrorKind::Internal);
  // P_l has N_out = n·d rows, B_l the state's n·width (ResiDual: 2n·d) except B_{L−1}, which ends in the head
  const Index L = e.layers(), n = e.tokens(), width = e.state_width(), d_out = e.out_width(L - 1);
  const Index N_out = n * d_out, N_state = n * width;
  std::vector<SquareSum> prod(static_cast<size_t>(L)), block(with_blocks ? static_cast<size_t>(L) : 0);
  const Index total = with_blocks ? std::max(N_out, N_state) : N_out;
  StreamedSweep out;
  out.rows_per_chunk = std::min(K, total);
  for (Index start = 0; start < total; start += out.rows_per_chunk) {
    const Index k = std::min(out.rows_per_chunk, total - start);
    const Index kp = std::max<Index>(0, std::min(k, N_out - start));  // this chunk's rows of P_l
    if (kp > 0) e.set_identity(CotangentStacks::kPStack, start, kp, d_out);
    for (Index l = L - 1; l >= 0; --l) {
      if (kp > 0) {
        e.vjp(CotangentStacks::kPStack, l);  // rows start.. of P_l (as P_lᵀe_i)
        e.add_squares(CotangentStacks::kPStack, prod[static_cast<size_t>(l)]);
      }
      if (with_blocks) {
        const Index kb = std::max<Index>(0, std::min(k, n * e.out_width(l) - start));  // this chunk's rows of B_l
        if (kb > 0) {
          e.set_identity(CotangentStacks::kBStack, start, kb, e.out_width(l));
          e.vjp(CotangentStacks::kBStack, l);  // rows start.. of B_l
          e.add_squares(CotangentStacks::kBStack, block[static_cast<size_t>(l)]);
        }
      }
      if (after_block) after_block(l, k);
    }
    ++out.chunks;
  }
  for (const SquareSum& s : prod) out.product.push_back(exact_norm_from(s, std::min(N_out, N_state), N_state));
  for (Index l = 0; l < static_cast<Index>(block.size()); ++l)
    out.block.push_back(exact_norm_from(block[static_cast<size_t>(l)], std::min(n * e.out_width(l), N_state), N_state));
  return out;
}

}  // namespace gradflow
