// context.hpp — one forward and one backward pass of a model on its input, shared by every analysis.
// The loss: "dot" L = Σ g ⊙ y (g seeded N(0,1) or given: the plain vector-Jacobian product) or
// "half-sq" L = ½ Σ y² (so dL/dy = y), or "lm" (the `output_loss` given: GPT-2's next-token cross-entropy,
// lm_loss.hpp).
#pragma once
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gradflow/run/options.hpp"
#include "gradflow/backend/backend.hpp"
#include "gradflow/core/jacobian.hpp"
#include "gradflow/model/model.hpp"

namespace gradflow {

struct AnalysisContext {
  // backend: the run's one backend (RunBackend::get(), backend.hpp), where the Jacobians' work runs.
  // weights: for a model whose weight matrices are held per block (block_weights.hpp), the hook that draws and frees
  // them around each block of the forward and backward pass (nothing after the pass may read them).
  AnalysisContext(const Model& model, Mat x0, const AnalysisOptions& opts, std::shared_ptr<const Backend> backend,
                  const Mat* cotangent = nullptr, uint64_t seed = 0,
                  const std::function<double(const Mat& y, Mat& dL_dy)>* output_loss = nullptr,
                  const Model::BlockHook* weights = nullptr);

  const Model& model;
  AnalysisOptions opts;
  Trace trace;            // forward pass: x_l, caches, y
  Mat dL_dy;              // (n, d) the output cotangent
  double loss = 0;
  std::vector<Mat> dx;    // dL/dx_l for l = 0..L (dx[L] = dL/dx_L, the gradient entering the head)
  ParamGrads grads;       // dL/dθ for every parameter (empty accumulators unless opts.keep_param_grads)
  std::vector<double> param_grad_norms;  // ‖dL/dθ_i‖_F for every parameter i (ParamStore order)
  // For every parameter i of role InProjWeight (else empty): the Frobenius norms of its gradient's three row blocks
  // ‖dL/dW_q‖, ‖dL/dW_k‖, ‖dL/dW_v‖ (rows 0..d, d..2d, 2d..3d of in_proj_weight's gradient, PyTorch's packing).
  std::vector<std::vector<double>> in_proj_part_norms;

  Index tokens() const { return trace.x[0].rows(); }
  // the backward pass: dx, dL/dθ (kept or not, opts.keep_param_grads) and param_grad_norms
  Index width() const { return trace.x[0].cols(); }
  // The singular values of each P_l: min(its rows n·d, its columns n·width) (resi-dual's P_l is N × 2N).
  Index product_size() const { return tokens() * std::min(width(), trace.y.cols()); }

  // B_l = dx_{l+1}/dx_l, where x_L is the network output y: the top block's Jacobian includes the
  // final norm (so P_l = B_{L-1} ··· B_l and `jacobian --from l --to l+1` is always B_l).
  Jacobian layer_jacobian(Index l) const;
  // Explicit Jacobians, top-down through the run's backend: calls visit(l, B_l, P_l) for l = L-1 .. 0
  // with B_l = dx_{l+1}/dx_l and P_l = dy/dx_l (dense (N, N) buffers of the backend, which may live on a device),
  // keeping only the current product in memory. NaN/Inf in B_l or P_l stops with Error(Numeric) naming it.
  void for_each_product(const std::function<void(Index, const DenseBuffer&, const DenseBuffer&)>& visit) const;
  // The same walk with host matrices, for tests and benchmarks: the CPU backend's own (DenseBuffer::host_view), a
  // device's copied back.
  void for_each_product(const std::function<void(Index, const Mat&, const Mat&)>& visit) const;
  // The run's backend: what the analyses compute B_l's and P_l's numbers with, and whose kernels run the chains.
  const Backend& backend() const { return *backend_; }
  // dx_m/dx_l as a dense matrix (m = L means y).
  Mat jacobian_between(Index from, Index to) const;

 private:
  void backward_with_param_norms(const Model::BlockHook* weights);
  std::shared_ptr<const Backend> backend_;
};

}  // namespace gradflow
