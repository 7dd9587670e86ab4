// lm.hpp — the language model `gradflow train` trains: a token embedding E (V, d) plus a learned positional
// embedding P (n, d) (none in a RoPE block, whose positions are in the rotation: x_0 = S·E[s_i]), the L blocks and final norm of gradflow's Model (the very code `analyze` runs, with the
// causal mask on), and an output projection W (V, d) (W = E with --tie-embeddings), with softmax cross-entropy
// on the positions a task marks as targets:
//   x_0 = E[s_i] + P[i]          (n, d)
//   y   = head(blocks(x_0))      (n, d)      Model::forward
//   z   = (r·y) · Wᵀ             (n, V)      logits; r = m_N^(-1) under a width parametrization, else 1
//   L   = (1/T) Σ_{targets i} −log softmax(z_i)[t_i]    T = the number of targets in the whole batch
// Parameter names: the Model's (PyTorch nn.TransformerEncoder names) plus tok_embedding.weight, pos_embedding.weight
// (absent with RoPE) and lm_head.weight (absent when tied); E and W start N(0, 0.02) under --init hf-normal (the
// decoder presets' default), else N(0, 1) and U(±1/√d); a checkpoint of all of them is readable by `analyze --weights`, which
// warns about the three extra tensors and ignores them.
// Rule: parameter gradients ACCUMULATE (+=) into LmGrads; activation gradients are returned fresh.
// At a precision (train --precision f32|bf16|f16; docs/training.md "Low precision"), the model cast to that type: the
// blocks run on precision_kernels.hpp's kernels, x_0 and the logits are stored in the type (the logits' product in
// float32, rounded once), the cross-entropy and its gradient computed from the stored logits and dL/dz stored in the
// type, and dL/dy, the head's and the embeddings' gradients rounded to it. Under autocast (train --autocast bf16|f16)
// the blocks run on make_autocast_kernels' two sets and x_0, r·y, dL/dy and the embeddings' gradients are float32
// (an embedding's output, the stream); the logits' product and dL/dz stay in the type (a linear's output and its
// cotangent).
#pragma once
#include <limits>
#include <string>
#include <vector>

#include "gradflow/kernels/precision.hpp"
#include "gradflow/model/config.hpp"
#include "gradflow/model/model.hpp"
#include "gradflow/core/params.hpp"
#include "gradflow/train/coord_stats.hpp"
#include "gradflow/train/tasks.hpp"

namespace gradflow {

struct LmGrads {
  ParamGrads body;  // the Model's parameters
  ParamGrads io;    // tok_embedding, pos_embedding, lm_head
  LmGrads(const ParamStore& b, const ParamStore& i) : body(b), io(i) {}
  void zero() { body.zero(); io.zero(); }
  void add(const LmGrads& o);  // += o, tensor by tensor in store order
};

// What one sequence contributes to the batch loss.
struct SeqLoss {
  double loss_sum = 0;  // Σ over its targets of −log p(target)  (not divided by T)
  int targets = 0;
  int correct = 0;      // targets where argmax z_i == t_i
};

// Per-sequence instrumentation of a forward/backward pass (sums, so sequences add up).
struct SeqProbe {
  std::vector<double> dx_sq;     // ||dL/dx_l||² for l = 0..L (l = L: the gradient entering the head)
  std::vector<double> norm_sq;   // per norm (LanguageModel::norm_names order): Σ over tokens of the input's mean square
  double norm_tokens = 0;        // tokens counted in norm_sq
  double activation_bound = std::numeric_limits<double>::infinity();  // input: |x_{l+1}| above it is divergence
  int bad_forward_layer = -2;    // first block l whose output x_{l+1} is NaN/Inf or above activation_bound (-1: the
                                 // final norm/logits, NaN/Inf only); -2: none
  bool bad_forward_finite = false;  // that output was finite (above activation_bound), not NaN/Inf
  int bad_backward_layer = -2;   // highest l whose dL/dx_l is NaN/Inf; -2: none
  bool want_coords = false;      // input: fill coords (train's --coord-stats; coord_check.hpp)
  CoordStats coords;             // the coordinate sizes of this sequence's forward pass (coord_stats.hpp)
};

class LanguageModel {
 public:
  // cfg.causal must be true (the train command forces it); vocab V >= 2; n = positions. kernels: the blocks' (a
  // precision's: make_precision_kernels(precision, ...), which must outlive the model). branch_kernels: autocast's
  // low set (kernels then its float32 set; Model's constructor), null otherwise.
  LanguageModel(const ModelConfig& cfg, Index vocab, Index positions, bool tie_embeddings,
                const KernelOps& kernels = cpu_kernels(), Precision precision = Precision::F64,
                const KernelOps* branch_kernels = nullptr);

  Model& body() { return body_; }
  const Model& body() const { return body_; }
  ParamStore& io_params() { return io_; }
  const ParamStore& io_params() const { return io_; }
  Index vocab() const { return vocab_; }
  // Every parameter := src's (same architecture) rounded to this model's type: the model cast from master weights.
  void copy_params_rounded(const LanguageModel& src);
  // Every parameter rounded to p in place (train --precision: the master weights in float32).
  void round_params(Precision p);
  Index positions() const { return positions_; }
  bool tied() const { return tied_; }
  LmGrads make_grads() const { return LmGrads(body_.params(), io_); }

  // Blocks by init.scheme (init.hpp), then E ~ N(0, 1), P ~ N(0, 1) (nn.Embedding's default) and
  // W ~ U(±1/sqrt(d)) (nn.Linear's default), each from its own stream of init.seed.
  void initialize(const InitConfig& init);

  Mat embed(const std::vector<int>& tokens) const;  // (n, d): x_0 of the first n tokens
  Mat logits(const Mat& y) const;                    // (n, V)
  const Mat& output_weight() const;                  // W: lm_head.weight, or tok_embedding.weight when tied

  // Forward only.
  SeqLoss evaluate(const Sequence& s) const;
  // Forward and backward of one sequence with dL/dz_i = scale·(softmax(z_i) − e_{t_i}) on its targets (scale = 1/T);
  // accumulates every parameter gradient into g (at a precision, g's tensors are then rounded to the type: give g
  // zeroed, and it holds the sequence's stored gradient). probe (optional) receives the instrumentation; trace/dy (optional)
  // receive the forward trace and dL/dy for cross-checks.
  SeqLoss forward_backward(const Sequence& s, double scale, LmGrads& g, SeqProbe* probe = nullptr,
                           Trace* trace_out = nullptr, Mat* dy_out = nullptr) const;

  // Names of the norms whose input RMS is recorded: "layers.{l}.<norm>" for each unit's pre/branch/post norm in block
  // order, then "norm" (the final norm); block(l) is the layer of each entry (-1 for the final norm).
  const std::vector<std::string>& norm_names() const { return norm_names_; }
  const std::vector<int>& norm_layers() const { return norm_layers_; }

  // Every tensor (Model's, then tok_embedding/pos_embedding/lm_head), for checkpoints.
  std::vector<std::pair<std::string, const Mat*>> all_params() const;

 private:
  void probe_norms(const Trace& t, SeqProbe& p) const;
  bool norm_input_above(const BlockCache& b, Index l, double bound) const;
  Model body_;
  ParamStore io_;
  Index vocab_, positions_;
  bool tied_;
  Precision precision_;
  Precision stored_;  // the parameters', x_0's, dL/dy's and the embeddings' gradients' type: float32 under autocast
  int tok_ = -1, pos_ = -1, head_ = -1;
  std::vector<std::string> norm_names_;
  std::vector<int> norm_layers_;
};

// Cross-entropy of one row of logits: returns −log softmax(z)[t] and writes softmax(z) into p (same length).
double cross_entropy_row(const Eigen::Ref<const RowVec>& z, int t, RowVec& p);

}  // namespace gradflow
