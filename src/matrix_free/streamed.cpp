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

StreamedSweep streamed_frobenius(const Model& model, const Trace& trace, Index K, bool with_blocks,
                                 const std::function<void(Index, Index)>& after_block) {
  if (K < 1) throw Error("internal: streamed_frobenius with K = " + std::to_string(K), ErrorKind::Internal);
  // P_l has N_out = n·d rows, B_l the state's n·width (ResiDual: 2n·d) except B_{L−1}, which ends in the head
  const Index L = model.layers(), n = trace.x[0].rows(), width = trace.x[0].cols(), d_out = trace.y.cols();
  const Index N_out = n * d_out, N_state = n * width;
  std::vector<SquareSum> prod(static_cast<size_t>(L)), block(with_blocks ? static_cast<size_t>(L) : 0);
  std::vector<JacobianChain> chains;
  chains.reserve(static_cast<size_t>(L));
  for (Index l = 0; l < L; ++l)  // chain (l, l+1) is B_l, which for l = L−1 includes the head
    chains.emplace_back(model, trace, l, l + 1,
                        "B_" + std::to_string(l) + " = dx_" + std::to_string(l + 1) + "/dx_" + std::to_string(l) +
                            " (streamed identity rows)");
  const Index total = with_blocks ? std::max(N_out, N_state) : N_out;
  StreamedSweep out;
  out.rows_per_chunk = std::min(K, total);
  // rows start..start+k−1 of an identity of width w: row r is the (n, w) cotangent with a 1 at (i / w, i % w)
  const auto identity_rows = [n](Index start, Index k, Index w, Mat& U) {
    U.setZero(k * n, w);
    for (Index r = 0; r < k; ++r) U(r * n + (start + r) / w, (start + r) % w) = 1.0;
  };
  Mat U, V;
  for (Index start = 0; start < total; start += out.rows_per_chunk) {
    const Index k = std::min(out.rows_per_chunk, total - start);
    const Index kp = std::max<Index>(0, std::min(k, N_out - start));  // this chunk's rows of P_l
    Scaled W;
    if (kp > 0) {
      identity_rows(start, kp, d_out, U);
      W = Scaled{U, 0};
    }
    for (Index l = L - 1; l >= 0; --l) {
      const JacobianChain& B = chains[static_cast<size_t>(l)];
      if (kp > 0) {
        W = B.vjp(std::move(W));  // rows start.. of P_l (as P_lᵀe_i)
        prod[static_cast<size_t>(l)].add(W.m.squaredNorm(), 2 * W.exp2);
      }
      if (with_blocks) {
        const Index kb = std::max<Index>(0, std::min(k, B.out_size() - start));  // this chunk's rows of B_l
        if (kb > 0) {
          const Mat* rows = &U;
          if (kb != kp || B.out_width() != d_out) {
            identity_rows(start, kb, B.out_width(), V);
            rows = &V;
          }
          const Scaled Y = B.vjp(Scaled{*rows, 0});  // rows start.. of B_l
          block[static_cast<size_t>(l)].add(Y.m.squaredNorm(), 2 * Y.exp2);
        }
      }
      if (after_block) after_block(l, k);
    }
    ++out.chunks;
  }
  for (const SquareSum& s : prod) out.product.push_back(exact_norm_from(s, std::min(N_out, N_state), N_state));
  for (Index l = 0; l < static_cast<Index>(block.size()); ++l)
    out.block.push_back(exact_norm_from(block[static_cast<size_t>(l)],
                                        std::min(chains[static_cast<size_t>(l)].out_size(), N_state), N_state));
  return out;
}

}  // namespace gradflow
