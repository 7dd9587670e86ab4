// params.hpp — named parameter tensors, in PyTorch's state_dict naming and order.
// A 1-D tensor of length d (bias, LayerNorm gain) is stored as a (1, d) row; a scalar as (1, 1) with
// shape {1}; a Linear weight (out, in) as itself. `shape` keeps PyTorch's shape for checkpoints.
// Gradients live in a ParamGrads with the same layout, so one index addresses both.
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "gradflow/core/types.hpp"

namespace gradflow {

// What a parameter is for, recorded when it is created (initialization rules and placements read it; nothing
// re-derives it from the name).
enum class ParamRole {
  InProjWeight,    // (3d, d) packed q, k, v projections: self_attn.in_proj_weight
  InProjBias,      // (3d)
  OutProjWeight,   // (d, d) self_attn.out_proj.weight
  OutProjBias,     // (d)
  Linear1Weight,   // (d_ff, d) the feed-forward's first projection
  Linear1Bias,     // (d_ff)
  Linear2Weight,   // (d, d_ff) the feed-forward's second projection
  Linear2Bias,     // (d)
  Linear3Weight,   // (d_ff, d) a gated feed-forward's up projection (SwiGLU/GeGLU: linear2(act(linear1 x) ⊙ linear3 x))
  Linear3Bias,     // (d_ff)
  NormWeight,      // a norm's gain (LayerNorm, RMSNorm, DyT)
  NormBias,        // a norm's bias (LayerNorm, DyT)
  NormAlpha,       // DyT's scalar α inside tanh(α·x)
  Gate,            // ReZero's learnable scalar residual gate
  SkipVector,      // a learnable (d) skip coefficient: Admin's ω, NormFormer's w_resid
  HeadScale,       // NormFormer's per-head attention gain c_attn (h)
  Embedding,       // training: token and position embeddings
  OutputHead,      // training: the untied output projection
};
const char* to_string(ParamRole role);
// The projection and feed-forward weight matrices (in_proj, out_proj, linear1/2/3): ~all of a block's parameters.
bool is_weight_matrix(ParamRole role);

struct Param {
  std::string name;            // e.g. "layers.3.linear2.weight"
  std::vector<int64_t> shape;  // PyTorch shape, e.g. {64, 256}
  Mat value;                   // (rows, cols) as described above; empty while the parameter is not held (below)
  ParamRole role;              // what it is for
  bool held = true;            // false: a deferred parameter between materialize() and release() calls
  Index rows() const { return shape.size() == 2 ? shape[0] : 1; }
  Index cols() const { return shape.size() == 2 ? shape[1] : shape[0]; }
};

class ParamStore {
 public:
  // Adds a zero-filled tensor; shape of 1 entry => stored (1, shape[0]); 2 entries => (shape[0], shape[1]).
  // After defer_weight_matrices(), a weight matrix (is_weight_matrix) is added deferred instead: not held, no memory.
  int add(const std::string& name, std::vector<int64_t> shape, ParamRole role);
  int index(const std::string& name) const;  // throws Error naming the tensor when missing
  bool has(const std::string& name) const { return by_name_.count(name) != 0; }
  // Reading a parameter that is not held is an internal error (named), never a read of an empty matrix.
  Mat& operator[](int i) { return held_value(i); }
  const Mat& operator[](int i) const { return const_cast<ParamStore*>(this)->held_value(i); }
  // Weights held per block (Model built with WeightResidency::PerBlock, model/block_weights.hpp): the matrices start
  // deferred; materialize(i) allocates parameter i (uninitialized: the caller fills it), release(i) frees it again.
  void defer_weight_matrices() { defer_matrices_ = true; }
  void materialize(int i);
  void release(int i);
  Mat& at(const std::string& name) { return (*this)[index(name)]; }
  const Mat& at(const std::string& name) const { return (*this)[index(name)]; }
  const std::vector<Param>& all() const { return params_; }
  std::vector<Param>& all() { return params_; }
  size_t size() const { return params_.size(); }
  Index numel() const;

 private:
  Mat& held_value(int i);
  std::vector<Param> params_;
  std::unordered_map<std::string, int> by_name_;
  bool defer_matrices_ = false;
};

// Gradient accumulators shaped like a ParamStore; rule: parameter gradients are ACCUMULATED (+=).
class ParamGrads {
 public:
  explicit ParamGrads(const ParamStore& store) : ParamGrads(store, true) {}
  // allocate = false: every accumulator starts empty (0 x 0) until allocate(i) zero-fills it; release(i) frees
  // it again. AnalysisContext keeps only one block's gradients at a time this way.
  ParamGrads(const ParamStore& store, bool allocate);
  void allocate(int i);
  void release(int i) { g_[static_cast<size_t>(i)].resize(0, 0); }
  Mat& operator[](int i) { return g_[static_cast<size_t>(i)]; }
  const Mat& operator[](int i) const { return g_[static_cast<size_t>(i)]; }
  void zero();
  size_t size() const { return g_.size(); }

 private:
  std::vector<Mat> g_;
  std::vector<std::pair<Index, Index>> shapes_;
};

// An optional parameter (a bias under --bias off has index -1): the value, gradient or tangent at index i, or null.
inline const Mat* param_or_null(const ParamStore& p, int i) { return i >= 0 ? &p[i] : nullptr; }
inline Mat* grad_or_null(ParamGrads* g, int i) { return g && i >= 0 ? &(*g)[i] : nullptr; }
inline const Mat* tangent_or_null(const ParamGrads& t, int i) { return i >= 0 ? &t[i] : nullptr; }

}  // namespace gradflow
