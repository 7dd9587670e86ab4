// streamed.cpp — exact ‖P_l‖_F and ‖B_l‖_F from chunks of identity rows pushed down the VJP chain (streamed.hpp).
#include "gradflow/matrix_free/streamed.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gradflow/core/cancel.hpp"
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
                                 const std::function<void(Index, Index)>& after_block, ChunkRange range) {
  HostStacks stacks(model, trace);
  return streamed_frobenius(stacks, K, with_blocks, after_block, range);
}

Index StreamedShape::total_rows() const { return block_rows.empty() ? out_rows : std::max(out_rows, state_rows); }
Index StreamedShape::chunks() const {
  return rows_per_chunk > 0 ? (total_rows() + rows_per_chunk - 1) / rows_per_chunk : 0;
}

namespace {

// The norms from the sums of every chunk: P_l's N_out·N_state matrix has min(N_out, N_state) singular values, B_l's
// min(n·out_width(l), N_state); the RMS gain is over the N_state inputs.
void norms_from_sums(StreamedSweep& out, const std::vector<SquareSum>& prod, const std::vector<SquareSum>& block) {
  const StreamedShape& sh = out.shape;
  for (const SquareSum& s : prod)
    out.product.push_back(exact_norm_from(s, std::min(sh.out_rows, sh.state_rows), sh.state_rows));
  for (size_t l = 0; l < block.size(); ++l)
    out.block.push_back(exact_norm_from(block[l], std::min(sh.block_rows[l], sh.state_rows), sh.state_rows));
}

}  // namespace

StreamedSweep streamed_frobenius(CotangentStacks& e, Index K, bool with_blocks,
                                 const std::function<void(Index, Index)>& after_block, ChunkRange range) {
  if (K < 1) throw Error("internal: streamed_frobenius with K = " + std::to_string(K), ErrorKind::Internal);
  // P_l has N_out = n·d rows, B_l the state's n·width (ResiDual: 2n·d) except B_{L−1}, which ends in the head
  const Index L = e.layers(), n = e.tokens(), d_out = e.out_width(L - 1);
  StreamedSweep out;
  StreamedShape& sh = out.shape;
  sh.out_rows = n * d_out;
  sh.state_rows = n * e.state_width();
  if (with_blocks)
    for (Index l = 0; l < L; ++l) sh.block_rows.push_back(n * e.out_width(l));
  const Index total = sh.total_rows();
  sh.rows_per_chunk = out.rows_per_chunk = std::min(K, total);
  out.chunks = sh.chunks();
  const Index first = range.begin, end = range.end < 0 ? out.chunks : range.end;
  if (first < 0 || first >= end || end > out.chunks)
    throw Error("internal: streamed chunks [" + std::to_string(first) + ", " + std::to_string(end) +
                    ") outside the sweep's " + std::to_string(out.chunks),
                ErrorKind::Internal);
  const bool part = !range.whole();  // a part records each chunk's sums; the whole sweep adds them as it goes
  std::vector<SquareSum> prod(static_cast<size_t>(L)), block(with_blocks ? static_cast<size_t>(L) : 0);
  for (Index c = first; c < end; ++c) {
    const Index start = c * out.rows_per_chunk, k = std::min(out.rows_per_chunk, total - start);
    const Index kp = std::max<Index>(0, std::min(k, sh.out_rows - start));  // this chunk's rows of P_l
    if (part) out.part.push_back(ChunkSquares{c, std::vector<SquareSum>(prod.size()), std::vector<SquareSum>(block.size())});
    std::vector<SquareSum>& P = part ? out.part.back().product : prod;
    std::vector<SquareSum>& B = part ? out.part.back().block : block;
    if (kp > 0) e.set_identity(CotangentStacks::kPStack, start, kp, d_out);
    for (Index l = L - 1; l >= 0; --l) {
      check_cancel();  // a front end asked to stop (core/cancel.hpp): between the sweep's block VJPs
      if (kp > 0) {
        e.vjp(CotangentStacks::kPStack, l);  // rows start.. of P_l (as P_lᵀe_i)
        e.add_squares(CotangentStacks::kPStack, P[static_cast<size_t>(l)]);
      }
      if (with_blocks) {
        const Index kb = std::max<Index>(0, std::min(k, sh.block_rows[static_cast<size_t>(l)] - start));
        if (kb > 0) {  // this chunk's rows of B_l
          e.set_identity(CotangentStacks::kBStack, start, kb, e.out_width(l));
          e.vjp(CotangentStacks::kBStack, l);  // rows start.. of B_l
          e.add_squares(CotangentStacks::kBStack, B[static_cast<size_t>(l)]);
        }
      }
      if (after_block) after_block(l, k);
    }
  }
  if (!part) norms_from_sums(out, prod, block);
  return out;
}

StreamedSweep streamed_from_chunks(const StreamedShape& shape, const std::vector<ChunkSquares>& chunks) {
  const auto fail = [](const std::string& what) {
    throw Error("internal: streamed chunks to merge: " + what, ErrorKind::Internal);
  };
  if (shape.rows_per_chunk < 1 || static_cast<Index>(chunks.size()) != shape.chunks())
    fail(std::to_string(chunks.size()) + " records for " + std::to_string(shape.chunks()) + " chunks");
  const size_t L = chunks.empty() ? 0 : chunks.front().product.size();
  std::vector<SquareSum> prod(L), block(shape.block_rows.size());
  for (size_t c = 0; c < chunks.size(); ++c) {
    const ChunkSquares& r = chunks[c];
    if (r.chunk != static_cast<Index>(c) || r.product.size() != L || r.block.size() != block.size())
      fail("record " + std::to_string(c) + " is chunk " + std::to_string(r.chunk) + " or of another depth");
    // each record holds one addition (SquareSum keeps it exactly as mantissa·2^exp2): added again, the same one
    for (size_t l = 0; l < L; ++l) prod[l].add(r.product[l].mantissa, r.product[l].exp2);
    for (size_t l = 0; l < block.size(); ++l) block[l].add(r.block[l].mantissa, r.block[l].exp2);
  }
  StreamedSweep out;
  out.shape = shape;
  out.rows_per_chunk = shape.rows_per_chunk;
  out.chunks = shape.chunks();
  norms_from_sums(out, prod, block);
  return out;
}

}  // namespace gradflow
