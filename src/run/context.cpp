// context.cpp — the shared forward/backward pass and the top-down products of explicit Jacobians.
#include "gradflow/run/context.hpp"

#include <algorithm>
#include <cmath>

#include "gradflow/core/error.hpp"
#include "gradflow/core/finite.hpp"
#include "gradflow/linalg/svd.hpp"
#include "gradflow/model/backward_by_block.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/run/memory_estimate.hpp"

namespace gradflow {

AnalysisContext::AnalysisContext(const Model& m, Mat x0, const AnalysisOptions& o,
                                 std::shared_ptr<const Backend> backend, const Mat* cotangent, uint64_t seed,
                                 const std::function<double(const Mat& y, Mat& dL_dy)>* output_loss,
                                 const Model::BlockHook* weights)
    : model(m), opts(o), grads(m.params(), o.keep_param_grads), backend_(std::move(backend)) {
  if (!backend_) throw Error("internal: an analysis context without a backend", ErrorKind::Internal);
  trace = model.forward(x0, weights);
  if (!all_finite(trace.y)) {
    for (Index l = 1; l < static_cast<Index>(trace.x.size()); ++l)
      if (!all_finite(trace.x[static_cast<size_t>(l)]))
        throw Error("forward pass produced NaN/Inf at the output of layer " + std::to_string(l - 1) +
                        "; fix: " + std::string(kNonFiniteFix), ErrorKind::Numeric);
    throw Error("forward pass produced NaN/Inf in the final norm; fix: " + std::string(kNonFiniteFix), ErrorKind::Numeric);
  }
  const Index n = trace.y.rows(), d = trace.y.cols();
  if (opts.loss == "dot") {
    if (cotangent) {
      require(cotangent->rows() == n && cotangent->cols() == d,
              "cotangent has shape (" + std::to_string(cotangent->rows()) + ", " + std::to_string(cotangent->cols()) +
                  "), the output is (" + std::to_string(n) + ", " + std::to_string(d) + "); fix: match the output shape");
      dL_dy = *cotangent;
    } else {
      dL_dy = random_normal(seed, "cotangent", n, d);
    }
    loss = dL_dy.cwiseProduct(trace.y).sum();
  } else if (opts.loss == "half-sq") {
    dL_dy = trace.y;
    loss = 0.5 * trace.y.squaredNorm();
  } else if (opts.loss == "lm" && output_loss) {
    loss = (*output_loss)(trace.y, dL_dy);
  } else {
    throw Error("unknown --loss '" + opts.loss + "'; fix: use --loss dot or --loss half-sq (or lm with --token-ids)");
  }
  backward_with_param_norms(weights);
  for (Index l = model.layers(); l >= 0; --l)
    if (!all_finite(dx[static_cast<size_t>(l)]))
      throw Error("backward pass produced NaN/Inf in dL/dx at layer " + std::to_string(l) +
                      "; fix: " + std::string(kNonFiniteFix), ErrorKind::Numeric);
  const auto& params = model.params().all();
  for (size_t i = 0; i < params.size(); ++i)
    if (!std::isfinite(param_grad_norms[i]))
      throw Error("backward pass produced NaN/Inf in the gradient of " + params[i].name + "; fix: " +
                      std::string(kNonFiniteFix), ErrorKind::Numeric);
}

void AnalysisContext::backward_with_param_norms(const Model::BlockHook* weights) {
  const auto& params = model.params().all();
  param_grad_norms.assign(params.size(), 0.0);
  in_proj_part_norms.assign(params.size(), {});
  // ‖dL/dθ_i‖ and, for in_proj_weight, the norms of its q, k, v row blocks
  const auto take_norms = [&](int i) {
    const Mat& g = grads[i];
    param_grad_norms[static_cast<size_t>(i)] = frobenius_norm(g);
    if (params[static_cast<size_t>(i)].role != ParamRole::InProjWeight) return;
    // rows q (h·e), k (K·e), v (K·e): grouped-query heads make k and v narrower than q
    const Index qw = model.config().q_width(), kvw = (g.rows() - qw) / 2;
    const Index starts[3] = {0, qw, qw + kvw}, widths[3] = {qw, kvw, kvw};
    for (Index part = 0; part < 3; ++part)
      in_proj_part_norms[static_cast<size_t>(i)].push_back(frobenius_norm(g.middleRows(starts[part], widths[part])));
  };
  if (opts.keep_param_grads) {
    model.backward(trace, dL_dy, &grads, &dx, weights);
    for (size_t i = 0; i < params.size(); ++i) take_norms(static_cast<int>(i));
    return;
  }
  // block by block (model/backward_by_block.hpp): each block's accumulators live only through its VJP
  backward_by_block(model, trace, dL_dy, grads, &dx, weights, [&](int i, Mat&) { take_norms(i); });
}

Jacobian AnalysisContext::layer_jacobian(Index l) const {
  Jacobian B = model.block_jacobian(l, trace.blocks[static_cast<size_t>(l)]);
  if (l == model.layers() - 1 && model.has_final_norm()) B = model.head_jacobian(trace.head, tokens()) * std::move(B);
  return B;
}

void AnalysisContext::for_each_product(
    const std::function<void(Index, const DenseBuffer&, const DenseBuffer&)>& visit) const {
  const Backend& be = *backend_;
  // the walk's peak in the backend's memory (memory_estimate.hpp)
  be.require_memory(explicit_device_bytes(model.config(), tokens()),
                    "the explicit products of N = n*d = " + std::to_string(tokens() * width()) + " (5 matrices of N^2)");
  std::unique_ptr<DenseBuffer> P;
  for (Index l = model.layers() - 1; l >= 0; --l) {
    Jacobian B = layer_jacobian(l);
    P = l == model.layers() - 1 ? be.upload(B.to_dense()) : be.multiply(std::move(P), B);
    const std::unique_ptr<DenseBuffer> Bd = be.densify(std::move(B));
    const bool b_finite = be.all_finite(*Bd);
    if (!b_finite || !be.all_finite(*P))
      throw Error("NaN/Inf in the explicit " + std::string(b_finite ? "product Jacobian P_" : "block Jacobian B_") +
                      std::to_string(l) + " (layers from the top down); fix: use --mode matrix-free, which rescales long "
                      "products, or lower --init-scale", ErrorKind::Numeric);
    visit(l, *Bd, *P);
  }
}

void AnalysisContext::for_each_product(const std::function<void(Index, const Mat&, const Mat&)>& visit) const {
  for_each_product([&](Index l, const DenseBuffer& B, const DenseBuffer& P) {
    const Mat *b = B.host_view(), *p = P.host_view();
    if (b && p) return visit(l, *b, *p);
    visit(l, B.to_host(), P.to_host());  // a device's: copied back
  });
}

Mat AnalysisContext::jacobian_between(Index from, Index to) const {
  const Index L = model.layers(), n = tokens();
  require(from >= 0 && from <= L, "--from " + std::to_string(from) + " is outside 0.." + std::to_string(L) +
                                      "; fix: choose a layer index between 0 and --layers");
  require(to >= from && to <= L, "--to " + std::to_string(to) + " must lie in " + std::to_string(from) + ".." +
                                     std::to_string(L) + "; fix: choose --to >= --from (and --to L for the output y)");
  if (from == to) return Jacobian::identity(n, width()).to_dense();
  // B_from first, not I·B_from: the product with the identity was an (N, N) GEMM that changed nothing
  Jacobian J = layer_jacobian(from);
  for (Index l = from + 1; l < to; ++l) J = layer_jacobian(l) * J;
  return std::move(J).to_dense();  // a dense J gives up its matrix (no (N, N) copy)
}

}  // namespace gradflow
