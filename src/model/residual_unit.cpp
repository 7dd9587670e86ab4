// residual_unit.cpp — z = s ⊙ x + c·BranchNorm(G(κ·PreNorm(x))) [+ x_block], y = PostNorm(z); parallel: G reads
// κ·PreNorm(x_block) (see residual_unit.hpp).
#include "gradflow/model/residual_unit.hpp"

#include "gradflow/core/error.hpp"
#include "gradflow/ops/elementwise.hpp"

namespace gradflow {

namespace {
// u = κ·v (κ = 1: v itself, so the schemes without a scale run exactly as before)
Mat scaled(double kappa, Mat v, const KernelOps& k) { return kappa != 1.0 ? ops::scaled(kappa, std::move(v), k) : v; }
}  // namespace

double ResidualUnit::branch_coefficient(const ParamStore& p) const {
  return spec.branch_scale * (gate >= 0 ? p[gate](0, 0) : 1.0);
}

Mat ResidualUnit::add_branch(const ParamStore& p, Mat s, const Mat& b) const {
  const double c = branch_coefficient(p);
  // autocast: a number times a low-precision b stays in its type (PyTorch's x + c * b); a gate is a 1-element
  // float32 parameter, which promotes the product to float32
  if (branch_kernels && gate < 0 && c != 1.0)
    return ops::added(std::move(s), ops::scaled(c, b, *branch_kernels), *kernels);
  return ops::added_scaled(std::move(s), c, b, *kernels);
}

// ∂L/∂b from ∂L/∂(c·b). Autocast with a low-precision b: its cotangent is of its type — c·cast(dcb) in that type
// for a number c, cast(c·dcb) for a gate's float32 product
Mat ResidualUnit::branch_cotangent(const ParamStore& p, const Mat& dcb) const {
  const double c = branch_coefficient(p);
  if (!branch_kernels) return ops::scaled(c, dcb, *kernels);
  Mat db = gate >= 0 ? ops::scaled(c, dcb, *kernels) : dcb;
  ops::cast_to(*branch_kernels, db);
  return gate < 0 && c != 1.0 ? ops::scaled(c, std::move(db), *branch_kernels) : db;
}

Mat ResidualUnit::apply_skip(const ParamStore& p, const Mat& x) const {
  if (skip_is_identity()) return x;
  if (skip < 0) return ops::scaled(spec.skip_scale, x, *kernels);
  return ops::scaled_columns(x, p[skip].row(0), *kernels);
}

Mat stream_pair(const Mat& a, const Mat& d) {
  Mat y(a.rows(), a.cols() + d.cols());
  y.leftCols(a.cols()) = a;
  y.rightCols(d.cols()) = d;
  return y;
}

Mat ResidualUnit::forward(const ParamStore& p, const Mat& x, UnitCache& c, const Mat* block_input) const {
  if (!spec.dual_stream) return forward_stream(p, x, c, block_input);
  // y_a = PostNorm(s ⊙ x_a + c·b), y_d = x_d + c·b
  const Index d = x.cols() / 2;
  const Mat ya = forward_stream(p, x.leftCols(d), c, nullptr);
  return stream_pair(ya, add_branch(p, x.rightCols(d), c.b));
}

Mat ResidualUnit::vjp(const ParamStore& p, const UnitCache& c, const Mat& dy, ParamGrads* g, Mat* d_block_input) const {
  if (!spec.dual_stream) return vjp_stream(p, c, dy, g, d_block_input, nullptr);
  // in the forward pass this was: y_a = PostNorm(s ⊙ x_a + c·b), y_d = x_d + c·b
  const Index d = dy.cols() / 2;
  const Mat dyd = dy.rightCols(d);
  return stream_pair(vjp_stream(p, c, dy.leftCols(d), g, nullptr, &dyd), dyd);
}

Mat ResidualUnit::jvp(const ParamStore& p, const UnitCache& c, const Mat& dx, const Mat* dx_block) const {
  if (!spec.dual_stream) return jvp_stream(p, c, dx, dx_block, nullptr);
  const Index d = dx.cols() / 2;
  Mat dcb;
  const Mat dya = jvp_stream(p, c, dx.leftCols(d), nullptr, &dcb);
  return stream_pair(dya, ops::added(dx.rightCols(d), dcb, *kernels));
}

Mat ResidualUnit::jvp_with_params(const ParamStore& p, const UnitCache& c, const Mat& dx, const ParamGrads& dtheta,
                                  const Mat* dx_block) const {
  if (!spec.dual_stream) return jvp_with_params_stream(p, c, dx, dtheta, dx_block, nullptr);
  const Index d = dx.cols() / 2;
  Mat dcb;
  const Mat dya = jvp_with_params_stream(p, c, dx.leftCols(d), dtheta, nullptr, &dcb);
  return stream_pair(dya, ops::added(dx.rightCols(d), dcb, *kernels));
}

Mat ResidualUnit::forward_stream(const ParamStore& p, const Mat& x, UnitCache& c, const Mat* block_input) const {
  const KernelOps& k = *kernels;
  if ((spec.add_block_input || spec.parallel) && !block_input)
    throw Error("internal: a unit that reads the block input called without it", ErrorKind::Internal);
  const Mat& src = spec.parallel ? *block_input : x;
  Mat u_own;
  if (pre) u_own = scaled(spec.pre_norm_scale, pre->forward(p, src, c.pre), k);
  const Mat& u = pre ? u_own : src;
  const Mat gx = G->forward(p, u, c.g);
  c.b = branch ? branch->forward(p, gx, c.branch) : gx;
  if (skip >= 0) c.x = x;
  Mat z = add_branch(p, apply_skip(p, x), c.b);
  if (spec.add_block_input) z = ops::added(std::move(z), *block_input, k);
  return post ? post->forward(p, z, c.post) : z;
}

Mat ResidualUnit::vjp_stream(const ParamStore& p, const UnitCache& c, const Mat& dy, ParamGrads* g,
                             Mat* d_block_input, const Mat* extra_dcb) const {
  const KernelOps& k = *kernels;
  // Where a step is the identity (no PostNorm, an identity skip, c = 1 outside autocast, κ = 1, no BranchNorm) its
  // input is used in place instead of copied: 1·x is x exactly, so the values are those of the step written out.
  // in the forward pass this was: y = PostNorm(z)
  Mat dz_own;
  if (post) dz_own = post->vjp(p, c.post, dy, g);
  const Mat& dz = post ? dz_own : dy;
  // in the forward pass this was: z = s ⊙ x + c·b [+ x_block]  (and, dual stream, y_d = x_d + c·b)
  if (spec.add_block_input && d_block_input) *d_block_input = dz;
  const bool identity_skip = skip_is_identity();  // dx = dz
  Mat dx_own;
  if (!identity_skip) dx_own = apply_skip(p, dz);
  if (g && skip >= 0) {
    Mat prod = dz;
    k.multiply_tiled(prod.data(), c.x.data(), prod.rows(), prod.cols(), prod.rows());  // dz ⊙ x
    k.add_column_sums(prod.data(), prod.rows(), prod.cols(), (*g)[skip].data());
  }
  Mat dcb_sum;  // ∂L/∂(c·b): dz, plus x_d's cotangent for a dual-stream unit
  if (extra_dcb) dcb_sum = ops::added(dz, *extra_dcb, k);
  const Mat& dcb = extra_dcb ? dcb_sum : dz;
  if (g && gate >= 0) (*g)[gate](0, 0) += spec.branch_scale * k.dot(dcb.data(), c.b.data(), dcb.size());
  Mat db_own;
  const bool unit_coefficient = !branch_kernels && branch_coefficient(p) == 1.0;
  if (!unit_coefficient) db_own = branch_cotangent(p, dcb);
  const Mat& db = unit_coefficient ? dcb : db_own;
  // in the forward pass this was: b = BranchNorm(G(u)), u = κ·PreNorm(x)
  Mat dgx_own;
  if (branch) dgx_own = branch->vjp(p, c.branch, db, g);
  const Mat& dgx = branch ? dgx_own : db;
  Mat du = G->vjp(p, c.g, dgx, g);
  if (pre && spec.pre_norm_scale != 1.0) du = ops::scaled(spec.pre_norm_scale, std::move(du), k);
  Mat dsrc = pre ? pre->vjp(p, c.pre, du, g) : std::move(du);
  if (!spec.parallel) {
    // dx + dsrc (the sum is symmetric, so adding into dsrc's storage gives the same values)
    if (identity_skip) return ops::added(std::move(dsrc), dz, k);
    return ops::added(std::move(dx_own), dsrc, k);
  }
  // parallel: the branch read x_block
  if (!d_block_input) throw Error("internal: a parallel unit's VJP called without d_block_input", ErrorKind::Internal);
  *d_block_input = std::move(dsrc);
  if (!identity_skip) return dx_own;
  return post ? std::move(dz_own) : Mat(dy);
}

Mat ResidualUnit::jvp_stream(const ParamStore& p, const UnitCache& c, const Mat& dx, const Mat* dx_block,
                             Mat* dcb) const {
  const KernelOps& k = *kernels;
  if ((spec.add_block_input || spec.parallel) && !dx_block)
    throw Error("internal: a unit that reads the block input: JVP called without its tangent", ErrorKind::Internal);
  const Mat& dsrc = spec.parallel ? *dx_block : dx;
  Mat du_own;  // an identity step's input is read in place (as in vjp_stream)
  if (pre) du_own = scaled(spec.pre_norm_scale, pre->jvp(p, c.pre, dsrc), k);
  const Mat& du = pre ? du_own : dsrc;
  Mat db = G->jvp(p, c.g, du);
  if (branch) db = branch->jvp(p, c.branch, db);
  const double cb = branch_coefficient(p);
  Mat dz;
  if (dcb) {
    *dcb = ops::scaled(cb, db, k);
    dz = ops::added(apply_skip(p, dx), *dcb, k);
  } else if (skip_is_identity() && cb == 1.0) {
    dz = ops::added(std::move(db), dx, k);  // dx + db, summed into db's storage (the same values)
  } else {
    dz = ops::added_scaled(apply_skip(p, dx), cb, db, k);
  }
  if (spec.add_block_input) dz = ops::added(std::move(dz), *dx_block, k);
  return post ? post->jvp(p, c.post, dz) : dz;
}

Mat ResidualUnit::jvp_with_params_stream(const ParamStore& p, const UnitCache& c, const Mat& dx,
                                         const ParamGrads& dtheta, const Mat* dx_block, Mat* dcb) const {
  const KernelOps& k = *kernels;
  if ((spec.add_block_input || spec.parallel) && !dx_block)
    throw Error("internal: a unit that reads the block input: JVP called without its tangent", ErrorKind::Internal);
  const Mat& dsrc = spec.parallel ? *dx_block : dx;
  const Mat du = pre ? scaled(spec.pre_norm_scale, pre->jvp_with_params(p, c.pre, dsrc, dtheta), k) : dsrc;
  const Mat dgx = G->jvp_with_params(p, c.g, du, dtheta);
  const Mat db = branch ? branch->jvp_with_params(p, c.branch, dgx, dtheta) : dgx;
  Mat dz = apply_skip(p, dx);
  Mat cdb = ops::scaled(branch_coefficient(p), db, k);  // the branch term's tangent c·db + λ·da·b (shared with x_d: dcb)
  dz = ops::added(std::move(dz), cdb, k);
  if (skip >= 0) dz = ops::added(std::move(dz), ops::scaled_columns(c.x, dtheta[skip].row(0), k), k);
  if (gate >= 0) {
    const Mat gate_term = ops::scaled(spec.branch_scale * dtheta[gate](0, 0), c.b, k);
    dz = ops::added(std::move(dz), gate_term, k);
    if (dcb) cdb = ops::added(std::move(cdb), gate_term, k);
  }
  if (dcb) *dcb = std::move(cdb);
  if (spec.add_block_input) dz = ops::added(std::move(dz), *dx_block, k);
  return post ? post->jvp_with_params(p, c.post, dz, dtheta) : dz;
}

Jacobian ResidualUnit::branch_jacobian(const ParamStore& p, const UnitCache& c) const {
  // c · J_branch · J_G · κ J_pre, keeping token-wise structure where it exists
  Jacobian J = G->jacobian(p, c.g);
  if (pre) {
    Jacobian Jpre = pre->jacobian(p, c.pre);
    if (spec.pre_norm_scale != 1.0) Jpre.scale(spec.pre_norm_scale);
    J = std::move(J) * Jpre;
  }
  if (branch) J = branch->jacobian(p, c.branch) * std::move(J);
  J.scale(branch_coefficient(p));
  return J;
}

Jacobian ResidualUnit::skip_jacobian(const ParamStore& p, Index n, Index d) const {
  Jacobian J = Jacobian::identity(n, d);
  if (skip < 0) {
    if (spec.skip_scale != 1.0) J.scale(spec.skip_scale);
    return J;
  }
  J.scale(0.0);
  J.add_diagonal(p[skip].row(0));
  return J;
}

Jacobian ResidualUnit::jacobian(const ParamStore& p, const UnitCache& c) const {
  if (spec.parallel) {  // the branch read x_block: on its own input only J_post·diag(s)
    const Jacobian S = skip_jacobian(p, c.b.rows(), c.b.cols());
    return post ? post->jacobian(p, c.post) * S : S;
  }
  Jacobian J = branch_jacobian(p, c);
  if (spec.dual_stream) {  // [[J_post·(diag(s) + A), 0], [A, I]] on the pair
    const Index n = c.b.rows(), d = c.b.cols();
    Jacobian Ja = J;
    if (skip < 0) Ja.add_identity(spec.skip_scale);
    else Ja.add_diagonal(p[skip].row(0));
    if (post) Ja = post->jacobian(p, c.post) * std::move(Ja);
    const Jacobian I = Jacobian::identity(n, d);
    return Jacobian::streams({{&Ja, nullptr}, {&J, &I}}, n, d);
  }
  if (skip < 0) J.add_identity(spec.skip_scale);
  else J.add_diagonal(p[skip].row(0));
  if (post) J = post->jacobian(p, c.post) * std::move(J);
  return J;
}

Jacobian ResidualUnit::block_input_jacobian(const ParamStore& p, const UnitCache& c) const {
  const Index n = c.b.rows(), d = c.b.cols();
  Jacobian J = spec.parallel ? branch_jacobian(p, c) : Jacobian::identity(n, d);
  if (spec.parallel && spec.add_block_input) J.add_identity(1.0);
  return post ? post->jacobian(p, c.post) * std::move(J) : J;
}

}  // namespace gradflow
