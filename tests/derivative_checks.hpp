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

// The finite-difference stencils, at step h (kFdStep unless a test says otherwise):
//   Central    (f(x+h) − f(x−h))/2h: truncation h²·f‴/6, rounding ~ε·|f|/h;
//   FourPoint  (f(x−2h) − 8f(x−h) + 8f(x+h) − f(x+2h))/12h: truncation h⁴·f⁽⁵⁾/30, rounding ~1.5·ε·|f|/h, four
//              evaluations per entry instead of two. So it helps where truncation dominates (at kFdStep), or on
//              smooth maps at the larger kFdStepSmooth where both terms are small.
// FourPoint is used where a test's measured central-difference error was above a tenth of kFdTol (scratch runs of
// the whole suite, max relative error over the test's checks), each call site giving its before/after:
//   model: parameter JVP vs finite differences (test_model_derivatives.cpp)           4.5e-7 -> 1.5e-11 (kFdStep)
//   new recipes: new-parameter gradients (test_placements_derivatives.cpp, GELU)       3.4e-7 -> 3.6e-9 (kFdStepSmooth)
// and not in "model: input and parameter gradients" (2.7e-7 on 8 of 7289 parameter tensors): there four-point made
// it worse (up to 1.0 on 22 tensors at kFdStep, with the ReLU cases' kinks also at kFdStepSmooth), probably where
// the loss barely depends on a parameter, whose central differences cancel exactly while a four-point sum leaves
// rounding; it keeps Central, within its tolerance by ~4x.
// Every other derivative test measured <= 2.4e-8 (ops: <= 2.3e-8, model block/head Jacobians <= 9e-9).
enum class Stencil { Central, FourPoint };

// d/dt of f_at(t) at t = 0 by the stencil; R is Mat or double.
template <class R, class F>
R fd_diff(const F& f_at, Stencil stencil = Stencil::Central, double h = kFdStep) {
  if (stencil == Stencil::Central) {
    const R p = f_at(h), m = f_at(-h);
    return (p - m) / (2 * h);
  }
  const R m2 = f_at(-2 * h), m1 = f_at(-h), p1 = f_at(h), p2 = f_at(2 * h);
  return (m2 - 8 * m1 + 8 * p1 - p2) / (12 * h);
}

// Finite differences, one column per input entry.
inline Mat fd_jacobian(const MapFn& f, const Mat& x, Stencil stencil = Stencil::Central, double h = kFdStep) {
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
        stencil, h);
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
  const Mat Jfd = fd_jacobian(f, x, stencil);
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
