// test_norms.cpp — layernorm, rmsnorm and dyt: Jacobians vs finite differences, jvp/vjp vs J, parameter
// gradients vs finite differences, and LayerNorm's closed form from REFERENCES.md.
#include "derivative_checks.hpp"
#include "gradflow/ops/norm.hpp"

using namespace gradflow;
using namespace gradflow::test;

namespace {
// A ParamStore holding one norm layer of kind k with non-trivial gains (1 + noise), biases and DyT α.
struct NormFixture {
  ParamStore p;
  NormLayer layer;
  NormFixture(NormKind k, Index d) {
    layer.kind = k;
    if (k == NormKind::DyT) { layer.alpha = p.add("n.alpha", {1}, ParamRole::NormAlpha); p[layer.alpha](0, 0) = 0.7; }
    layer.weight = p.add("n.weight", {d}, ParamRole::NormWeight);
    p[layer.weight] = Mat::Ones(1, d) + random_mat(1, d, 31, 0.3);
    if (k != NormKind::RMSNorm) { layer.bias = p.add("n.bias", {d}, ParamRole::NormBias); p[layer.bias] = random_mat(1, d, 32, 0.3); }
  }
};
}  // namespace

TEST_CASE("norms: derivatives", "[ops][norm]") {
  for (NormKind k : {NormKind::LayerNorm, NormKind::RMSNorm, NormKind::DyT}) {
    for (Index d : {1, 2, 7}) {
      // RMSNorm at d = 1 is y = γ·x/sqrt(x² + ε): its derivative γ·ε/(x² + ε)^{3/2} is a cancellation of
      // order ε/x² ~ 1e-5, ill-conditioned in any formula; d = 1 is covered by LayerNorm and DyT.
      if (k == NormKind::RMSNorm && d == 1) continue;
      NormFixture f(k, d);
      const Mat x = random_mat(3, d, 40 + static_cast<uint64_t>(d), 1.5);
      NormCache c;
      f.layer.forward(f.p, x, c);
      check_map(
          to_string(k) + " d=" + std::to_string(d),
          [&](const Mat& v) { NormCache cc; return f.layer.forward(f.p, v, cc); },
          [&](const Mat& v) { return f.layer.jvp(f.p, c, v); },
          [&](const Mat& u) { return f.layer.vjp(f.p, c, u, nullptr); },
          [&] { return f.layer.jacobian(f.p, c).to_dense(); }, x);
    }
  }
}

TEST_CASE("norms: parameter gradients vs finite differences", "[ops][norm]") {
  for (NormKind k : {NormKind::LayerNorm, NormKind::RMSNorm, NormKind::DyT}) {
    INFO(to_string(k));
    NormFixture f(k, 5);
    const Mat x = random_mat(4, 5, 50), g = random_mat(4, 5, 51);
    NormCache c;
    f.layer.forward(f.p, x, c);
    ParamGrads grads(f.p);
    f.layer.vjp(f.p, c, g, &grads);
    for (size_t i = 0; i < f.p.size(); ++i) {
      const int idx = static_cast<int>(i);
      const Mat fd = unflat(fd_jacobian([&](const Mat& w) {
                               ParamStore q = f.p;
                               q[idx] = w;
                               NormCache cc;
                               return Mat::Constant(1, 1, g.cwiseProduct(f.layer.forward(q, x, cc)).sum());
                             }, f.p[idx]).row(0), f.p[idx].rows(), f.p[idx].cols());
      INFO(f.p.all()[i].name);
      CHECK(rel_err(grads[idx], fd) <= kFdTol);
    }
  }
}

TEST_CASE("layernorm Jacobian equals the closed form of Xiong et al. (eps = 0, gamma = 1)", "[ops][norm]") {
  const Index d = 6;
  ParamStore p;
  NormLayer ln;
  ln.eps = 0.0;
  ln.weight = p.add("w", {d}, ParamRole::NormWeight);
  ln.bias = p.add("b", {d}, ParamRole::NormBias);
  p[ln.weight].setOnes();
  const Mat x = random_mat(1, d, 60);
  NormCache c;
  ln.forward(p, x, c);
  // J = (√d/‖y‖)(I − y yᵀ/‖y‖²)(I − 1 1ᵀ/d), y = x − mean(x)
  const Vec y = (x.row(0).array() - x.mean()).transpose();
  const Mat I = Mat::Identity(d, d);
  const Mat closed = (std::sqrt(double(d)) / y.norm()) * (I - y * y.transpose() / y.squaredNorm()) *
                     (I - Mat::Ones(d, d) / double(d));
  CHECK(rel_err(ln.jacobian(p, c).to_dense(), closed) <= kCrossTol);
  // two directions per token are invisible: the mean and the token's own scale
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(closed);
  CHECK(svd.singularValues()(d - 1) <= kZeroSingularTol);
  CHECK(svd.singularValues()(d - 2) <= kZeroSingularTol);
  CHECK(svd.singularValues()(d - 3) > kUnattenuatedFloor);
}

// Issue 13 item 4: rows whose squares overflow (|x| > sqrt(DBL_MAX) ~ 1.34e154) used to normalize to exact zeros
// (r = 1/sqrt(inf) = 0). The norms are scale-invariant, so x·2^k (exact) must give the same normalized row as x
// with ε·2^-2k (here 0 in double precision, so compared with ε = 0), and r scaled by 2^-k, and the same
// derivatives (J, JVP, VJP are all r·(...)): checked against the unscaled row, and J vs JVP/VJP at the huge scale.
TEST_CASE("norms: rows beyond sqrt(DBL_MAX) normalize exactly, as the same row at ordinary scale", "[ops][norm]") {
  for (NormKind k : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    for (int shift : {520, 900, 1000}) {  // 2^520 ~ 3e156: squares overflow; 2^1000 ~ 1e301: the sum too
      INFO(to_string(k) << " scaled by 2^" << shift);
      NormFixture f(k, 7);
      const Mat x = random_mat(3, 7, 70, 1.5);
      const Mat big = x.unaryExpr([shift](double v) { return std::ldexp(v, shift); });
      NormLayer plain = f.layer;
      plain.eps = 0.0;
      NormCache cb, cx;
      const Mat yb = f.layer.forward(f.p, big, cb);
      const Mat yx = plain.forward(f.p, x, cx);
      REQUIRE(yb.allFinite());
      CHECK(rel_err(yb, yx) <= kAlgebraTol);
      CHECK(rel_err(cb.xhat, cx.xhat) <= kAlgebraTol);
      const Vec rstd_back = cb.rstd.unaryExpr([shift](double r) { return std::ldexp(r, shift); });
      CHECK(rel_err(rstd_back, cx.rstd) <= kAlgebraTol);
      const Mat Jb = f.layer.jacobian(f.p, cb).to_dense().unaryExpr([shift](double v) { return std::ldexp(v, shift); });
      CHECK(rel_err(Jb, plain.jacobian(f.p, cx).to_dense()) <= kAlgebraTol);
      const Mat v = random_mat(3, 7, 71), u = random_mat(3, 7, 72);
      const Mat J = f.layer.jacobian(f.p, cb).to_dense();
      CHECK(rel_err(flat(f.layer.jvp(f.p, cb, v)), J * flat(v)) <= kCrossTol);
      CHECK(rel_err(flat(f.layer.vjp(f.p, cb, u, nullptr)), J.transpose() * flat(u)) <= kCrossTol);
    }
    // all entries equal and huge: only ε is left, the normalized row is 0 and r = 1/sqrt(ε)
    NormFixture f(k, 4);
    NormCache c;
    f.layer.forward(f.p, Mat::Constant(1, 4, 1e300), c);
    if (k == NormKind::LayerNorm) {
      CHECK(c.xhat.isZero(0.0));
      CHECK(c.rstd(0) == 1.0 / std::sqrt(f.layer.eps));
    } else {
      CHECK(c.xhat.allFinite());
      CHECK(std::abs(c.xhat(0, 0) - 1.0) <= kAlgebraTol);
    }
  }
}
