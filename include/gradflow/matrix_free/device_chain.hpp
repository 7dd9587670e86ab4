// device_chain.hpp — the model's VJP chain for stacks of cotangents written as a program of a backend's kernels
// (backend/kernel_ops.hpp), so the streamed engine runs where the backend's memory is (--mode streamed --device cuda):
// the weights and the forward trace's caches are uploaded once, the cotangent stacks stay on the device, and only
// each stack's sum of squares and largest entry come back. The forward pass itself stays on the CPU (Model::forward).
// Per unit (residual_unit.hpp), for k stacked cotangents of (n, d):
//   dz = J_postᵀ dy;  dx = s ⊙ dz;  db = c·dz;  dg = J_branchᵀ db;  du = J_Gᵀ dg;  dx += J_preᵀ (κ·du)  [d_block += dz]
//   J_Gᵀ (attention): dA = dg ⊙ c_h (NormFormer's head gains);  dO = J_innerᵀ (dA W_out) (Sub-LN's inner norm, or
//                     dA W_out);  per head, batched over the k copies: dP = dO_h V_hᵀ, dV_h = P_hᵀ dO_h,
//                     dS = P_h ⊙ (dP − rowsum(P_h ⊙ dP))/√e, dQ_h = dS K_h, dK_h = dSᵀ Q_h;
//                     HybridNorm: each of dQ, dK, dV through its per-head norm's VJP;  du = [dQ | dK | dV] W_in
//   J_Gᵀ (feed-forward): da = J_midᵀ (dg W2) (the mid norm, if any) ⊙ act'(z1) (tiled over the copies);  du = da W1
// and B2T's block-input cotangent added at the block's input; the head's norm first for B_{L−1}. Every GEMM is one
// (k·n × ·) product or one strided batch over the copies (the cache's operand shared: stride 0).
// Covered: every single-stream unit (pre, branch and post norms of any kind, κ, scalar or learnable skip, λ and
// ReZero's gate, B2T, causal masks, any activation, NormFormer's head gains and mid norm, Sub-LN's inner norm,
// HybridNorm's Q/K/V norms) and ResiDual's two streams: the state [x_a | x_d] (n, 2d), whose units run on x_a and add
// their branch to x_d; per block the stack's streams are copied apart and x_a's put back (docs/math.md §12). Every
// placement gradflow has; unsupported() names what a future one lacks.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gradflow/kernels/kernel_ops.hpp"
#include "gradflow/matrix_free/streamed.hpp"
#include "gradflow/model/model.hpp"

namespace gradflow {

class DeviceChain final : public CotangentStacks {
 public:
  // "" when the chain covers every unit of `model`; else what it lacks, e.g. "ResiDual's two streams".
  static std::string unsupported(const Model& model);
  // Uploads the weights and trace (Error naming the part when the backend's memory is short) and allocates stacks
  // and work buffers for up to `max_copies` cotangents. The model and trace must outlive the chain.
  DeviceChain(const KernelOps& ops, const Model& model, const Trace& trace, Index max_copies);
  ~DeviceChain() override;

  Index layers() const override;
  Index tokens() const override { return n_; }
  Index state_width() const override { return w_; }
  Index out_width(Index l) const override { return l == layers() - 1 ? d_ : w_; }
  void set_identity(int stack, Index start, Index k, Index width) override;
  void vjp(int stack, Index l) override;
  void add_squares(int stack, SquareSum& sum) const override;

  // The same with the quantity a NaN/Inf error names (vjp(stack, l) names B_l).
  void vjp(int stack, Index l, const std::string& what);
  // Tangent direction (Lanczos): the stack becomes B_l·stack for block l alone; head_jvp applies the final norm
  // (identity without one), which follows block L−1 in B_{L−1} and every P_l. what: as above.
  void jvp_block(int stack, Index l, const std::string& what);
  void head_jvp(int stack, const std::string& what);

  // The stack's current value as a host matrix (k·n, d), its scale 2^exp2.
  Mat stack_to_host(int stack, long* exp2) const;
  // Sets the stack from a host matrix (k·n, d) at scale 2^exp2.
  void set_stack(int stack, const Mat& m, long exp2 = 0);
  // The (k, k) Gram matrix G_ij = w_i·w_j of the stack's k copies w_i (each flattened to n·d), computed where the
  // stack lives (one GEMM); its value is 2^(2·exp2)·G. What Hutchinson's estimate needs (hutchinson.hpp).
  Mat gram(int stack, long* exp2) const;

  struct Norm;
  struct Unit;

 private:
  struct Stack {
    std::unique_ptr<KernelArray> m;
    Index copies = 0;
    Index width = 0;  // the state's (w_), or d at the output side of P_l and B_{L−1} (two streams)
    long exp2 = 0;
  };
  const double* put(const Mat& host, const std::string& what);  // uploads and keeps it
  Norm norm(const NormLayer& layer, const NormCache& c, const std::string& what);
  // dy_d / dx_d: ResiDual's second stream (null for one stream): its cotangent joins the branch's (VJP), the branch's
  // tangent is added to it in place (JVP)
  void unit_vjp(const Unit& u, const double* dy, double* dx, double* d_block, Index copies, const double* dy_d);
  void unit_jvp(const Unit& u, const double* dx, double* dy, const double* dx_block, Index copies, double* dx_d);
  // ResiDual's block: the stack's two streams apart, the units on x_a, x_d's part, the stack put back together
  void dual_vjp(Stack& s, Index l);
  void dual_jvp(Stack& s, Index l);
  void norm_vjp(const Norm& nm, const double* dy, double* dx, Index copies) const;
  void norm_jvp(const Norm& nm, const double* dx, double* dy, Index copies) const;
  void attention_vjp(const Unit& u, const double* dg, double* du, Index copies);
  void attention_jvp(const Unit& u, const double* du, double* dg, Index copies);
  void feed_forward_vjp(const Unit& u, const double* dg, double* du, Index copies);
  void feed_forward_jvp(const Unit& u, const double* du, double* dg, Index copies);
  // HybridNorm: each third of d[Q | K | V] (rows, 3d) through its per-head norm's VJP (or JVP), in place
  void qkv_norms(const Unit& u, double* dqkv, Index copies, bool jvp);
  // NaN/Inf: Error naming the direction, the quantity and the block (−1: the final norm); rescale by 2^e
  void keep_in_range(Stack& s, const char* dir, const std::string& what, Index block) const;
  double* work(int i) { return work_[static_cast<size_t>(i)]->data(); }

  const KernelOps& ops_;
  const Model& model_;
  Index n_, d_, w_, ff_, max_copies_;  // w_: the state's width, 2d for ResiDual's two streams
  std::vector<std::unique_ptr<KernelArray>> kept_;  // the uploaded weights and caches
  std::vector<std::vector<Unit>> blocks_;
  std::unique_ptr<Norm> head_;
  Stack stacks_[2];
  std::vector<std::unique_ptr<KernelArray>> work_;
};

// dx_to/dx_from as a ChainOperator (for Lanczos, chain_singular.hpp) on a DeviceChain's kPStack: each product
// uploads the (k·n, d) input, applies the blocks on the device and brings the result back.
class DeviceChainOperator final : public ChainOperator {
 public:
  DeviceChainOperator(DeviceChain& chain, Index from, Index to, std::string what);
  Index tokens() const override { return chain_->tokens(); }
  Index width() const override { return chain_->state_width(); }
  Index out_width() const override { return to_ == chain_->layers() ? chain_->out_width(to_ - 1) : chain_->state_width(); }
  Index length() const override { return to_ - from_; }
  const std::string& what() const override { return what_; }
  Scaled jvp(Scaled v) const override;
  Scaled vjp(Scaled u) const override;

 private:
  DeviceChain* chain_;  // its stacks change with every product (the operator is const to Lanczos)
  Index from_, to_;
  std::string what_;
};

}  // namespace gradflow
