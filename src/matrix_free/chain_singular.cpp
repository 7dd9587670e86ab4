// chain_singular.cpp — Lanczos on a rescaled Jacobian chain (see chain_singular.hpp).
#include "gradflow/matrix_free/chain_singular.hpp"

#include <algorithm>
#include <cmath>

#include "gradflow/error.hpp"
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
  if (!y.allFinite())
    throw Error("the rescaled Lanczos operator of " + what + " overflowed (scale 2^" + std::to_string(c) +
                    "); fix: lower --init-scale", ErrorKind::Numeric);
}

}  // namespace

ChainSingular chain_top_singular(const JacobianChain& J, Index k, uint64_t seed, double tol) {
  const Index n = J.tokens(), d = J.width(), N = J.size();
  ChainSingular out;
  // Reference scale c = 2^e ≈ ‖J v₀‖ for a random unit v₀.
  Scaled v0{random_normal(seed, "lanczos-scale:" + J.what(), n, d), 0};
  v0.m /= v0.m.norm();
  const Scaled r0 = J.jvp(v0);
  const double nrm = r0.m.norm();
  long c = 0;
  if (nrm > 0) {
    int e = 0;
    std::frexp(nrm, &e);
    c = r0.exp2 + e;
  }
  out.scale_exp2 = c;
  const LinearMap A = [&](const double* x, double* y) {
    Scaled s{Eigen::Map<const Mat>(x, n, d), 0};
    unscale_into(J.jvp(std::move(s)), c, y, J.what());
  };
  const LinearMap At = [&](const double* x, double* y) {
    Scaled s{Eigen::Map<const Mat>(x, n, d), 0};
    unscale_into(J.vjp(std::move(s)), c, y, J.what());
  };
  out.solver = top_singular_values(A, At, N, N, k, tol);
  if (out.solver.converged) {
    const Vec& sv = out.solver.values;  // σ(J / 2^c)
    out.values.resize(sv.size());
    out.log10_values.resize(sv.size());
    for (Index i = 0; i < sv.size(); ++i) {
      out.values(i) = std::ldexp(sv(i), static_cast<int>(std::max(-4000L, std::min(4000L, c))));
      out.log10_values(i) = std::log10(sv(i)) + static_cast<double>(c) * std::log10(2.0);
    }
  }
  return out;
}

}  // namespace gradflow
