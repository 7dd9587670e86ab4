// residual_unit.cpp — z = s ⊙ x + c·BranchNorm(G(PreNorm(x))), y = PostNorm(z) (see residual_unit.hpp).
#include "gradflow/model/residual_unit.hpp"

#include "gradflow/error.hpp"

namespace gradflow {

double ResidualUnit::branch_coefficient(const ParamStore& p) const {
  return spec.branch_scale * (gate >= 0 ? p[gate](0, 0) : 1.0);
}

Mat ResidualUnit::apply_skip(const Mat& x) const {
  if (skip.size() == 0) return spec.skip_scale == 1.0 ? x : Mat(spec.skip_scale * x);
  return x.array().rowwise() * skip.array();
}

Mat ResidualUnit::forward(const ParamStore& p, const Mat& x, UnitCache& c) const {
  const Mat u = pre ? pre->forward(p, x, c.pre) : x;
  const Mat gx = G.forward(p, u, c.g);
  c.b = branch ? branch->forward(p, gx, c.branch) : gx;
  Mat z = apply_skip(x);
  z += branch_coefficient(p) * c.b;
  return post ? post->forward(p, z, c.post) : z;
}

Mat ResidualUnit::vjp(const ParamStore& p, const UnitCache& c, const Mat& dy, ParamGrads* g) const {
  // in the forward pass this was: y = PostNorm(z)
  const Mat dz = post ? post->vjp(p, c.post, dy, g) : dy;
  // in the forward pass this was: z = s ⊙ x + c·b
  Mat dx = apply_skip(dz);
  if (g && gate >= 0) (*g)[gate](0, 0) += spec.branch_scale * dz.cwiseProduct(c.b).sum();
  const Mat db = branch_coefficient(p) * dz;
  // in the forward pass this was: b = BranchNorm(G(u)), u = PreNorm(x)
  const Mat dgx = branch ? branch->vjp(p, c.branch, db, g) : db;
  const Mat du = G.vjp(p, c.g, dgx, g);
  dx += pre ? pre->vjp(p, c.pre, du, g) : du;
  return dx;
}

Mat ResidualUnit::jvp(const ParamStore& p, const UnitCache& c, const Mat& dx) const {
  const Mat du = pre ? pre->jvp(p, c.pre, dx) : dx;
  const Mat dgx = G.jvp(p, c.g, du);
  const Mat db = branch ? branch->jvp(p, c.branch, dgx) : dgx;
  Mat dz = apply_skip(dx);
  dz += branch_coefficient(p) * db;
  return post ? post->jvp(p, c.post, dz) : dz;
}

Jacobian ResidualUnit::jacobian(const ParamStore& p, const UnitCache& c) const {
  // J_branch · J_G · J_pre, keeping token-wise structure where it exists
  Jacobian J = G.jacobian(p, c.g);
  if (pre) J = J * pre->jacobian(p, c.pre);
  if (branch) J = branch->jacobian(p, c.branch) * J;
  J.scale(branch_coefficient(p));
  if (skip.size() == 0) J.add_identity(spec.skip_scale);
  else J.add_diagonal(skip);
  if (post) J = post->jacobian(p, c.post) * J;
  return J;
}

}  // namespace gradflow
