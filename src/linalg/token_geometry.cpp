// token_geometry.cpp — see token_geometry.hpp (definitions in docs/math.md §10).
#include "gradflow/linalg/token_geometry.hpp"

#include <cmath>
#include <limits>

#include "gradflow/linalg/svd.hpp"

namespace gradflow {

TokenGeometry token_geometry(const Mat& X) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Index n = X.rows();
  TokenGeometry g;
  // cosine: the off-diagonal of the Gram matrix of the unit tokens (pairwise, not ‖Σu‖² − n, which cancels)
  const Vec norms = X.rowwise().norm();
  if (n < 2 || !(norms.minCoeff() > 0)) {
    g.mean_cosine = nan;
  } else {
    const Mat U = norms.cwiseInverse().asDiagonal() * X;
    const Mat G = U * U.transpose();
    double off = 0;
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < n; ++j)
        if (i != j) off += G(i, j);
    g.mean_cosine = off / (static_cast<double>(n) * static_cast<double>(n - 1));
  }
  const double fro = frobenius_norm(X);
  if (!(fro > 0)) return TokenGeometry{g.mean_cosine, nan, nan};
  const RowVec mean = X.colwise().mean();
  g.rank_one_distance = frobenius_norm(X.rowwise() - mean) / fro;
  const double top = singular_values(X)(0);
  g.stable_rank = (fro / top) * (fro / top);
  return g;
}

AttentionStats attention_stats(const Mat& P, bool causal) {
  const Index n = P.rows();
  AttentionStats s;
  if (n == 0) return s;
  double h = 0, hmax = 0, self = 0;
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < n; ++j) {
      const double p = P(i, j);
      if (p > 0) h -= p * std::log(p);
    }
    hmax += std::log(static_cast<double>(causal ? i + 1 : n));
    self += P(i, i);
  }
  const double dn = static_cast<double>(n);
  return AttentionStats{h / dn, hmax / dn, self / dn};
}

}  // namespace gradflow
