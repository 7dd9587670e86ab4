// chain_singular.cpp — Lanczos on a rescaled Jacobian chain (see chain_singular.hpp).
#include "gradflow/matrix_free/chain_singular.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gradflow/core/error.hpp"
#include "gradflow/core/finite.hpp"
#include "gradflow/model/init.hpp"

namespace gradflow {
namespace {

// out = 2^(r.exp2 − c) · r.m, flattened row-major (N values).
void unscale_into(const Scaled& r, long c, double* out, const std::string& what) {
  const long e = std::max(-4000L, std::min(4000L, r.exp2 - c));
  Eigen::Map<Mat> y(out, r.m.rows(), r.m.cols());
  y = r.m;
  // two steps keep each factor a representable power of two
  y *= std::ldexp(1.0, static_cast<int>(e / 2));
  y *= std::ldexp(1.0, static_cast<int>(e - e / 2));
  if (!all_finite(y))
    throw Error("the rescaled Lanczos operator of " + what + " overflowed (scale 2^" + std::to_string(c) +
                    "); fix: " + std::string(kNonFiniteFix), ErrorKind::Numeric);
}

// σ(J) = 2^c · σ(J / 2^c) from the solver's values, and their log10 (finite even beyond a double's range).
void finish(ChainSingular& out, long c) {
  out.scale_exp2 = c;
  if (!out.solver.converged) return;
  const Vec& sv = out.solver.values;  // σ(J / 2^c)
  out.values.resize(sv.size());
  out.log10_values.resize(sv.size());
  for (Index i = 0; i < sv.size(); ++i) {
    out.values(i) = std::ldexp(sv(i), static_cast<int>(std::max(-4000L, std::min(4000L, c))));
    out.log10_values(i) = std::log10(sv(i)) + static_cast<double>(c) * std::log10(2.0);
  }
}

// J·v = 0 exactly for a random Gaussian v means J = 0 with probability one (a proper null space has measure
// zero). Lanczos would break down on the zero operator (0/0 normalizing its first residual), so report
// σ_1..k = 0 directly, as converged with no restarts.
ChainSingular zero_operator(Index k, Index N) {
  ChainSingular out;
  out.solver.values = Vec::Zero(std::min(k, N));
  out.solver.converged = true;
  out.solver.operations = 1;
  out.values = out.solver.values;
  out.log10_values = Vec::Constant(out.values.size(), -std::numeric_limits<double>::infinity());
  return out;
}

}  // namespace

ChainSingular chain_top_singular(const ChainOperator& J, Index k, uint64_t seed, double tol) {
  const Index n = J.tokens(), d = J.width(), N = J.size(), d_out = J.out_width(), M = J.out_size();
  ChainSingular out;
  // Reference scale c = 2^e ≈ ‖J v₀‖ for a random unit v₀.
  Scaled v0{random_normal(seed, "lanczos-scale:" + J.what(), n, d), 0};
  v0.m /= v0.m.norm();
  const Scaled r0 = J.jvp(v0);
  const double nrm = r0.m.norm();
  if (nrm == 0) return zero_operator(k, std::min(M, N));
  int e = 0;
  std::frexp(nrm, &e);
  const long c = r0.exp2 + e;
  const LinearMap A = [&](const double* x, double* y) {
    Scaled s{Eigen::Map<const Mat>(x, n, d), 0};
    unscale_into(J.jvp(std::move(s)), c, y, J.what());
  };
  const LinearMap At = [&](const double* x, double* y) {
    Scaled s{Eigen::Map<const Mat>(x, n, d_out), 0};
    unscale_into(J.vjp(std::move(s)), c, y, J.what());
  };
  out.solver = top_singular_values(A, At, M, N, k, tol);
  finish(out, c);
  return out;
}

ChainSingular chain_top_singular_minus_identity(const ChainOperator& J, Index k, uint64_t seed, double tol) {
  const Index n = J.tokens(), d = J.width(), N = J.size();
  if (!J.square())
    throw Error("internal: " + J.what() + " - I of a non-square chain", ErrorKind::Internal);
  ChainSingular out;
  const std::string what = J.what() + " - I";
  const auto shifted = [&](bool transpose) -> LinearMap {
    return [&, transpose](const double* x, double* y) {
      Scaled s{Eigen::Map<const Mat>(x, n, d), 0};
      unscale_into(transpose ? J.vjp(std::move(s)) : J.jvp(std::move(s)), 0, y, what);
      Eigen::Map<Mat>(y, n, d) -= Eigen::Map<const Mat>(x, n, d);
    };
  };
  {
    const Mat v0 = random_normal(seed, "lanczos-zero-test:" + J.what(), n, d);
    Mat r0(n, d);
    shifted(false)(v0.data(), r0.data());
    if (r0.isZero(0.0)) return zero_operator(k, N);  // e.g. ReZero at alpha = 0: B_l = I exactly
  }
  out.solver = top_singular_values(shifted(false), shifted(true), N, N, k, tol);
  finish(out, 0);
  return out;
}

}  // namespace gradflow
