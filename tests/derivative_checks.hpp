// derivative_checks.hpp — the checks every differentiable map in gradflow goes through, written once:
//   1. explicit Jacobian vs finite differences                   (kFdTol)
//   2. J·v == jvp(v) and uᵀJ == vjp(u), also for k stacked copies (kCrossTol)
// Maps act on (n, d) matrices; Jacobians use the row-major flattening of types.hpp.
#pragma once
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "gradflow/model/init.hpp"
#include "gradflow/core/types.hpp"
#include "tolerances.hpp"

namespace gradflow::test {

using MapFn = std::function<Mat(const Mat&)>;

inline Eigen::Map<const Vec> flat(const Mat& m) { return Eigen::Map<const Vec>(m.data(), m.size()); }

inline Mat unflat(const Vec& v, Index rows, Index cols) { return Eigen::Map<const Mat>(v.data(), rows, cols); }

// ||a − b||_F / ||b||_F (absolute when b = 0)
inline double rel_err(const Mat& a, const Mat& b) {
  const double nb = b.norm();
  return (a - b).norm() / (nb > 0 ? nb : 1.0);
}

// The finite-difference stencils, at step h = kFdStep:
//   Central    (f(x+h) − f(x−h))/2h: truncation h²·f‴/6 ~ 1e-10, rounding ~ε·|f|/h ~ 1e-11 (relative);
//   FourPoint  (f(x−2h) − 8f(x−h) + 8f(x+h) − f(x+2h))/12h: truncation h⁴·f⁽⁵⁾/30 ~ 1e-21, rounding ~1.5·ε·|f|/h;
//              four evaluations per entry instead of two. Used where a test's measured central-difference error
//              is above a tenth of kFdTol (large third derivatives); each such call site says so.
enum class Stencil { Central, FourPoint };

// d/dt of f_at(t) at t = 0 by the stencil; R is Mat or double.
template <class R, class F>
R fd_diff(const F& f_at, double h, Stencil stencil) {
  if (stencil == Stencil::Central) {
    const R p = f_at(h), m = f_at(-h);
    return (p - m) / (2 * h);
  }
  const R m2 = f_at(-2 * h), m1 = f_at(-h), p1 = f_at(h), p2 = f_at(2 * h);
  return (m2 - 8 * m1 + 8 * p1 - p2) / (12 * h);
}

// Finite differences, one column per input entry.
inline Mat fd_jacobian(const MapFn& f, const Mat& x, double h = kFdStep, Stencil stencil = Stencil::Central) {
  const Mat y0 = f(x);
  Mat J(y0.size(), x.size());
  Mat xp = x;
  for (Index k = 0; k < x.size(); ++k) {
    const double v = xp.data()[k];
    const Mat dy = fd_diff<Mat>(
        [&](double t) {
          xp.data()[k] = v + t;
          const Mat y = f(xp);
          xp.data()[k] = v;
          return y;
        },
        h, stencil);
    J.col(k) = flat(dy);
  }
  return J;
}

inline Mat random_mat(Index rows, Index cols, uint64_t seed, double scale = 1.0) {
  return scale * random_normal(seed, "test", rows, cols);
}

// Stacks k copies vertically: (k·n, d).
inline Mat stack(const std::vector<Mat>& parts) {
  Mat s(static_cast<Index>(parts.size()) * parts[0].rows(), parts[0].cols());
  for (size_t c = 0; c < parts.size(); ++c) s.middleRows(static_cast<Index>(c) * parts[0].rows(), parts[0].rows()) = parts[c];
  return s;
}

// Runs checks 1 and 2 for a map at x. `jac` returns the explicit dense Jacobian at x.
inline void check_map(const std::string& what, const MapFn& f, const MapFn& jvp, const MapFn& vjp,
                      const std::function<Mat()>& jac, const Mat& x, uint64_t seed = 1,
                      Stencil stencil = Stencil::Central) {
  INFO(what);
  const Mat J = jac();
  const Mat y = f(x);
  REQUIRE(J.rows() == y.size());
  REQUIRE(J.cols() == x.size());
  const Mat Jfd = fd_jacobian(f, x, kFdStep, stencil);
  const double e_fd = rel_err(J, Jfd);
  INFO("Jacobian vs finite differences: rel err " << e_fd);
  CHECK(e_fd <= kFdTol);
  std::vector<Mat> vs, us;
  for (int c = 0; c < 3; ++c) {
    vs.push_back(random_mat(x.rows(), x.cols(), seed + 10 + static_cast<uint64_t>(c)));
    us.push_back(random_mat(y.rows(), y.cols(), seed + 20 + static_cast<uint64_t>(c)));
  }
  const Mat jv = jvp(stack(vs)), uj = vjp(stack(us));
  for (size_t c = 0; c < vs.size(); ++c) {
    const Index r = static_cast<Index>(c);
    const Mat Jv = unflat(J * flat(vs[c]), y.rows(), y.cols());
    const Mat uJ = unflat(J.transpose() * flat(us[c]), x.rows(), x.cols());
    const double e_jvp = rel_err(jv.middleRows(r * y.rows(), y.rows()), Jv);
    const double e_vjp = rel_err(uj.middleRows(r * x.rows(), x.rows()), uJ);
    INFO("copy " << c << ": J·v vs jvp " << e_jvp << ", uᵀJ vs vjp " << e_vjp);
    CHECK(e_jvp <= kCrossTol);
    CHECK(e_vjp <= kCrossTol);
  }
}

}  // namespace gradflow::test
