// scaled_moments.hpp — the second moment of a row without overflow, for LayerNorm and RMSNorm.
// A row whose squares overflow (|x| beyond ~1.34e154 = sqrt(DBL_MAX)) still has an exact, finite normalization:
// the norms are scale-invariant. The plain sum of squares is tried first, so every ordinary result keeps its bits;
// only when it (or the mean) is not finite for a finite row is the row scaled by a power of two, 2^-e with
// max|x|·2^-e in [0.5, 1) (exact, apart from entries that become subnormal, which the moment cannot see), and
//   r = 1/sqrt(m + ε) = 2^-e / sqrt(m_s + ε·2^-2e),   m = 2^2e · m_s  (m_s the scaled moment, at most 4).
// docs/math.md, "Normalizations at extreme scales".
#pragma once
#include <cmath>

#include "gradflow/core/types.hpp"

namespace gradflow::ops::detail {

// The power-of-two exponent e of the row's largest magnitude (frexp's: max|x| = f·2^e, f in [0.5, 1)).
inline int scale_exponent(const RowVec& x) {
  int e = 0;
  std::frexp(x.cwiseAbs().maxCoeff(), &e);
  return e;
}

// For the scaled moment m_s of a row scaled by 2^-e: r_s = 1/sqrt(m_s + ε·2^-2e), so that the normalized row is
// (scaled row)·r_s and r = 2^-e·r_s. Needs m_s > 0 (a zero moment has r = 1/sqrt(ε) and a zero normalized row).
inline double scaled_rsqrt(double ms, double eps, int e) { return 1.0 / std::sqrt(ms + std::ldexp(eps, -2 * e)); }

}  // namespace gradflow::ops::detail
