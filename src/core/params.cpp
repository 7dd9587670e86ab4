// params.cpp — ParamStore / ParamGrads (see params.hpp).
#include "gradflow/core/params.hpp"

#include <algorithm>

#include "gradflow/core/error.hpp"

namespace gradflow {
namespace {

// A zero-filled (rows, cols) matrix whose pages are first touched by all threads: the kernel zeroes a page when it
// is first written, which for the full-scale model's ~600 MiB of parameters (and as much for its gradients) costs
// more than the fill itself on a virtual machine; Eigen's Zero() would pay it on one thread.
Mat zeros(Index rows, Index cols) {
  Mat m(rows, cols);
  double* const p = m.data();
  const Index total = m.size(), grain = Index(1) << 18;  // 2 MiB of doubles: one transparent huge page
  const Index chunks = (total + grain - 1) / grain;
#ifdef _OPENMP  // the io fuzzers compile this file without OpenMP
#pragma omp parallel for schedule(static) if (chunks > 1)
#endif
  for (Index c = 0; c < chunks; ++c) std::fill(p + c * grain, p + std::min(total, (c + 1) * grain), 0.0);
  return m;
}

}  // namespace

bool is_weight_matrix(ParamRole r) {
  return r == ParamRole::InProjWeight || r == ParamRole::OutProjWeight || r == ParamRole::Linear1Weight ||
         r == ParamRole::Linear2Weight || r == ParamRole::Linear3Weight;
}

const char* to_string(ParamRole role) {
  switch (role) {
    case ParamRole::InProjWeight: return "in_proj_weight";
    case ParamRole::InProjBias: return "in_proj_bias";
    case ParamRole::OutProjWeight: return "out_proj_weight";
    case ParamRole::OutProjBias: return "out_proj_bias";
    case ParamRole::Linear1Weight: return "linear1_weight";
    case ParamRole::Linear1Bias: return "linear1_bias";
    case ParamRole::Linear2Weight: return "linear2_weight";
    case ParamRole::Linear2Bias: return "linear2_bias";
    case ParamRole::Linear3Weight: return "linear3_weight";
    case ParamRole::Linear3Bias: return "linear3_bias";
    case ParamRole::NormWeight: return "norm_weight";
    case ParamRole::NormBias: return "norm_bias";
    case ParamRole::NormAlpha: return "norm_alpha";
    case ParamRole::Gate: return "gate";
    case ParamRole::SkipVector: return "skip_vector";
    case ParamRole::HeadScale: return "head_scale";
    case ParamRole::Embedding: return "embedding";
    case ParamRole::OutputHead: return "output_head";
  }
  return "?";
}

int ParamStore::add(const std::string& name, std::vector<int64_t> shape, ParamRole role) {
  if (by_name_.count(name)) throw Error("internal: parameter '" + name + "' added twice", ErrorKind::Internal);
  Index rows = 1, cols = 1;
  if (shape.size() == 1) cols = shape[0];
  else if (shape.size() == 2) { rows = shape[0]; cols = shape[1]; }
  else throw Error("internal: parameter '" + name + "' must be 1-D or 2-D", ErrorKind::Internal);
  const bool deferred = defer_matrices_ && is_weight_matrix(role);
  params_.push_back(Param{name, std::move(shape), deferred ? Mat() : zeros(rows, cols), role, !deferred});
  const int i = static_cast<int>(params_.size()) - 1;
  by_name_[name] = i;
  return i;
}

int ParamStore::index(const std::string& name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) throw Error("no parameter named '" + name + "'", ErrorKind::Internal);
  return it->second;
}

Mat& ParamStore::held_value(int i) {
  Param& p = params_[static_cast<size_t>(i)];
  if (!p.held)
    throw Error("internal: parameter '" + p.name + "' was read while its block's weights are not held (weights "
                "per block)", ErrorKind::Internal);
  return p.value;
}

void ParamStore::materialize(int i) {
  Param& p = params_[static_cast<size_t>(i)];
  p.value.resize(p.rows(), p.cols());
  p.held = true;
}

void ParamStore::release(int i) {
  Param& p = params_[static_cast<size_t>(i)];
  p.value.resize(0, 0);
  p.held = false;
}

Index ParamStore::numel() const {
  Index n = 0;
  for (const auto& p : params_) n += p.rows() * p.cols();  // held or not
  return n;
}

ParamGrads::ParamGrads(const ParamStore& store, bool allocate) {
  g_.reserve(store.size());
  shapes_.reserve(store.size());
  for (const auto& p : store.all()) {
    shapes_.emplace_back(p.rows(), p.cols());
    g_.push_back(allocate ? zeros(p.rows(), p.cols()) : Mat());
  }
}

void ParamGrads::allocate(int i) {
  const auto& [rows, cols] = shapes_[static_cast<size_t>(i)];
  g_[static_cast<size_t>(i)] = zeros(rows, cols);
}

void ParamGrads::zero() {
  for (auto& g : g_) g.setZero();
}

}  // namespace gradflow
