// scaled_moments.hpp — one row of LayerNorm or RMSNorm, x̂ = c·r with r = 1/sqrt(mean(c²) + ε) (c the centred row
// for LayerNorm, the row itself for RMSNorm), without overflow at any finite scale; written once for both.
// A row whose squares overflow (|x| beyond ~1.34e154 = sqrt(DBL_MAX)) still has an exact, finite normalization:
// the norms are scale-invariant. The plain sum of squares is tried first, so every ordinary result keeps its bits;
// only when the moment is not finite for a finite row is the row scaled by a power of two, 2^-e with
// max|x|·2^-e in [0.5, 1) (exact, apart from entries that become subnormal, which the moment cannot see), and
//   r = 1/sqrt(m + ε) = 2^-e / sqrt(m_s + ε·2^-2e),   m = 2^2e · m_s  (m_s the scaled moment, at most 4).
// docs/math.md, "Normalizations at extreme scales".
#pragma once
#include <cmath>

#include "gradflow/core/types.hpp"

namespace gradflow::kernels::detail {

// The power-of-two exponent e of the row's largest magnitude (frexp's: max|x| = f·2^e, f in [0.5, 1)).
inline int scale_exponent(const RowVec& x) {
  int e = 0;
  std::frexp(x.cwiseAbs().maxCoeff(), &e);
  return e;
}

// For the scaled moment m_s of a row scaled by 2^-e: r_s = 1/sqrt(m_s + ε·2^-2e), so that the normalized row is
// (scaled row)·r_s and r = 2^-e·r_s. Needs m_s > 0 (a zero moment has r = 1/sqrt(ε) and a zero normalized row).
inline double scaled_rsqrt(double ms, double eps, int e) { return 1.0 / std::sqrt(ms + std::ldexp(eps, -2 * e)); }

// Row `x` (a row of a matrix) normalized into `xhat` (a row of the same width), its r into `r`. `centre(row)` gives
// the values whose second moment is taken: LayerNorm returns the row minus its mean (a RowVec), RMSNorm the row
// itself (a reference, so the plain moment is summed over the row in place, as before). For LayerNorm the plain
// test needs only the variance: a finite row whose mean overflows has every centred entry, and so the variance,
// not finite.
template <class Row, class Centre, class Out>
void normalize_row(const Row& x, double eps, const Centre& centre, double& r, Out&& xhat) {
  const double d = static_cast<double>(x.cols());
  const auto& xc = centre(x);
  const double m = xc.squaredNorm() / d;
  if (std::isfinite(m) || !x.allFinite()) {
    r = 1.0 / std::sqrt(m + eps);
    xhat = xc * r;
    return;
  }
  // the sum or the squares overflowed for a finite row: the same normalization on the row scaled by 2^-e
  const int e = scale_exponent(x);
  const RowVec xs = x.unaryExpr([e](double v) { return std::ldexp(v, -e); });
  const auto& xcs = centre(xs);
  const double m_s = xcs.squaredNorm() / d;
  if (m_s == 0.0) {  // all entries equal: only ε is left
    r = 1.0 / std::sqrt(eps);
    xhat.setZero();
    return;
  }
  const double rs = scaled_rsqrt(m_s, eps, e);
  r = std::ldexp(rs, -e);
  xhat = xcs * rs;
}

}  // namespace gradflow::kernels::detail
