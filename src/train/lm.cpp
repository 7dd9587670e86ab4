// lm.cpp — see lm.hpp. The block stack's forward and backward are Model::forward/Model::backward, unchanged: the
// same code path as `analyze`, whose loss L = Σ g ⊙ y with g = dL/dy gives the very same block gradients.
#include "gradflow/train/lm.hpp"

#include <cmath>

#include "gradflow/core/error.hpp"
#include "gradflow/core/finite.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/core/rng.hpp"

namespace gradflow {

void LmGrads::add(const LmGrads& o) {
  for (size_t i = 0; i < body.size(); ++i) body[static_cast<int>(i)] += o.body[static_cast<int>(i)];
  for (size_t i = 0; i < io.size(); ++i) io[static_cast<int>(i)] += o.io[static_cast<int>(i)];
}

double cross_entropy_row(const Eigen::Ref<const RowVec>& z, int t, RowVec& p) {
  const double mx = z.maxCoeff();
  p = (z.array() - mx).exp().matrix();
  const double sum = p.sum();
  p /= sum;
  return (std::log(sum) + mx) - z(t);
}

namespace {

// Cross-entropy, target count and argmax hits over the positions with a target; with dz, also
// dL/dz_i = scale·(softmax(z_i) − e_t) for L = scale·Σ (lse(z_i) − z_i[t]) (rows without a target stay as given),
// stored in the type.
SeqLoss score_targets(const Mat& z, const Sequence& s, double scale, Mat* dz, Precision type = Precision::F64) {
  SeqLoss out;
  RowVec p;
  for (Index i = 0; i < z.rows(); ++i) {
    const int target = s.targets[static_cast<size_t>(i)];
    if (target < 0) continue;
    out.loss_sum += cross_entropy_row(z.row(i), target, p);
    ++out.targets;
    Index arg = 0;
    z.row(i).maxCoeff(&arg);
    out.correct += arg == target;
    if (dz) {
      p(target) -= 1.0;
      dz->row(i) = scale * p;
    }
  }
  if (dz && type != Precision::F64) round_in_place(type, *dz);
  return out;
}

// C (m, n) = op(A)·op(B) (+ C with accumulate) by the kernels (a precision's: float32 products, C rounded once)
void kernel_product(const KernelOps& k, const Mat& a, bool ta, const Mat& b, bool tb, Mat& c, bool accumulate) {
  const Index m = ta ? a.cols() : a.rows(), inner = ta ? a.rows() : a.cols(), n = tb ? b.rows() : b.cols();
  if (!accumulate) c.resize(m, n);
  k.gemm(m, n, inner, 1.0, GemmOperand{a.data(), a.cols(), 0, ta}, GemmOperand{b.data(), b.cols(), 0, tb},
         accumulate ? 1.0 : 0.0, c.data(), n, 0, 1);
}

// x scaled by r and stored in the type (x itself when r = 1)
Mat scaled_rounded(Precision p, double r, const Mat& x) {
  if (r == 1.0) return x;
  Mat y = r * x;
  round_in_place(p, y);
  return y;
}

}  // namespace

LanguageModel::LanguageModel(const ModelConfig& cfg, Index vocab, Index positions, bool tie, const KernelOps& kernels,
                             Precision precision, const KernelOps* branch_kernels)
    : body_(cfg, kernels, WeightResidency::Resident, branch_kernels), vocab_(vocab), positions_(positions), tied_(tie),
      precision_(precision), stored_(stored_type(precision, branch_kernels != nullptr)) {
  require(cfg.causal, "training needs the causal mask (next-token prediction); fix: the train command sets --causal");
  require(vocab >= 2, "--vocab " + std::to_string(vocab) + " is too small; fix: --vocab >= 2");
  const int64_t d = cfg.d_model;
  tok_ = io_.add("tok_embedding.weight", {vocab, d}, ParamRole::Embedding);
  // a RoPE block has its positions in the rotation (Llama, Qwen, OLMo-2, Gemma-2, GPT-NeoX): no learned absolute
  // position embedding then
  if (!cfg.rope) pos_ = io_.add("pos_embedding.weight", {positions, d}, ParamRole::Embedding);
  if (!tied_) head_ = io_.add("lm_head.weight", {vocab, d}, ParamRole::OutputHead);
  for (Index l = 0; l < body_.layers(); ++l) {
    for (const auto& u : body_.block(l))
      for (const auto* nm : {&u.spec.pre_norm, &u.spec.branch_norm, &u.spec.post_norm})
        if (!nm->empty()) {
          norm_names_.push_back(Model::layer_prefix(l) + *nm);
          norm_layers_.push_back(static_cast<int>(l));
        }
  }
  if (body_.has_final_norm()) {
    norm_names_.push_back("norm");
    norm_layers_.push_back(-1);
  }
}

void LanguageModel::initialize(const InitConfig& init) {
  gradflow::initialize(body_, init);
  const double bound = 1.0 / std::sqrt(static_cast<double>(body_.d_model()));
  // hf-normal: the families' N(0, initializer_range) for the embedding and the head; else nn.Embedding's N(0, 1) and
  // nn.Linear's U(±1/√d)
  const bool hf = init.scheme == "hf-normal";
  Rng(init.seed, "tok_embedding.weight").fill_normal(io_[tok_], hf ? kHfInitializerRange : 1.0);
  if (pos_ >= 0) Rng(init.seed, "pos_embedding.weight").fill_normal(io_[pos_], hf ? kHfInitializerRange : 1.0);
  if (!tied_) {
    if (hf) Rng(init.seed, "lm_head.weight").fill_normal(io_[head_], kHfInitializerRange);
    else Rng(init.seed, "lm_head.weight").fill_uniform(io_[head_], -bound, bound);
    // a width parametrization keeps the readout's std at the base width's (microsoft/mup's MuReadout: × m_N^(1/2))
    const double width = body_.config().factors().readout_init();
    if (width != 1.0) io_[head_] *= width;
  }
}

const Mat& LanguageModel::output_weight() const { return io_[tied_ ? tok_ : head_]; }

void LanguageModel::copy_params_rounded(const LanguageModel& src) {
  auto& dst_body = body_.params().all();
  const auto& src_body = src.body_.params().all();
  auto& dst_io = io_.all();
  const auto& src_io = src.io_.all();
  require(dst_body.size() == src_body.size() && dst_io.size() == src_io.size(),
          "copy_params_rounded: another architecture; fix: internal error");
  for (size_t i = 0; i < src_body.size(); ++i) dst_body[i].value = src_body[i].value;
  for (size_t i = 0; i < src_io.size(); ++i) dst_io[i].value = src_io[i].value;
  round_params(stored_);
}

void LanguageModel::round_params(Precision p) {
  for (auto& q : body_.params().all()) round_in_place(p, q.value);
  for (auto& q : io_.all()) round_in_place(p, q.value);
}

// in the forward pass: x_0[i] = S·E[s_i] + P[i]
Mat LanguageModel::embed(const std::vector<int>& tokens) const {
  const Index n = positions_, d = body_.d_model();
  require(static_cast<Index>(tokens.size()) >= n, "sequence shorter than --seq-len; fix: internal task error");
  const double scale = body_.config().embedding_scale();  // --embed-scale (1: none)
  Mat x(n, d);
  for (Index i = 0; i < n; ++i) {
    const int t = tokens[static_cast<size_t>(i)];
    require(t >= 0 && t < vocab_, "token " + std::to_string(t) + " outside the vocabulary; fix: raise --vocab");
    if (pos_ < 0) {  // RoPE: x_0[i] = S·E[s_i] (stored in the type at a precision)
      x.row(i) = scale * io_[tok_].row(t);
      if (precision_ != Precision::F64)
        for (Index j = 0; j < d; ++j) x(i, j) = round_to(stored_, x(i, j));
    } else if (precision_ == Precision::F64) {
      x.row(i) = scale * io_[tok_].row(t) + io_[pos_].row(i);
    } else {  // at a precision: S·E[s_i] stored, then the sum stored (two ops)
      for (Index j = 0; j < d; ++j)
        x(i, j) = round_to(stored_, round_to(stored_, scale * io_[tok_](t, j)) + io_[pos_](i, j));
    }
  }
  return x;
}

// z = (r·y) · Wᵀ   (n, d)·(d, V) -> (n, V); r = the parametrization's readout multiplier m_N^(-1) (1: none)
Mat LanguageModel::logits(const Mat& y) const {
  const double r = body_.config().factors().readout;
  if (precision_ != Precision::F64) {
    Mat z;
    kernel_product(body_.kernels(), scaled_rounded(stored_, r, y), false, output_weight(), true, z, false);
    return z;
  }
  return r == 1.0 ? Mat(y * output_weight().transpose()) : Mat((r * y) * output_weight().transpose());
}

SeqLoss LanguageModel::evaluate(const Sequence& s) const {
  const Trace t = body_.forward(embed(s.tokens));
  return score_targets(logits(t.y), s, 0.0, nullptr);
}

SeqLoss LanguageModel::forward_backward(const Sequence& s, double scale, LmGrads& g, SeqProbe* probe, Trace* trace_out,
                                        Mat* dy_out) const {
  const Index n = positions_;
  const Mat x0 = embed(s.tokens);
  Trace t = body_.forward(x0);
  const Mat z = logits(t.y);
  Mat dz = Mat::Zero(n, vocab_);  // (n, V)
  SeqLoss out = score_targets(z, s, scale, &dz, precision_);
  // in the forward pass: z = (r·y)·Wᵀ;  dL/dy = r·(dz·W),  dL/dW += dzᵀ·(r·y)  (r = 1 under sp)
  const double r = body_.config().factors().readout;
  const bool low = precision_ != Precision::F64;
  Mat dy;
  if (low) {  // the products by the kernels (float32, rounded once), r's products stored
    kernel_product(body_.kernels(), dz, false, output_weight(), false, dy, false);
    dy = scaled_rounded(stored_, r, dy);
    kernel_product(body_.kernels(), dz, true, scaled_rounded(stored_, r, t.y), false, g.io[tied_ ? tok_ : head_],
                   true);
  } else if (r == 1.0) {
    dy = dz * output_weight();
    g.io[tied_ ? tok_ : head_].noalias() += dz.transpose() * t.y;
  } else {
    dy = dz * output_weight();
    dy *= r;
    g.io[tied_ ? tok_ : head_].noalias() += dz.transpose() * (r * t.y);
  }
  std::vector<Mat> dx;
  const Mat dx0 = body_.backward(t, dy, &g.body, probe ? &dx : nullptr);
  // in the forward pass: x_0[i] = S·E[s_i] + P[i];  dE[s_i] += S·dx_0[i],  dP[i] += dx_0[i]
  const double embed_scale = body_.config().embedding_scale();
  for (Index i = 0; i < n; ++i) {
    g.io[tok_].row(s.tokens[static_cast<size_t>(i)]) += embed_scale * dx0.row(i);
    if (pos_ >= 0) g.io[pos_].row(i) += dx0.row(i);
  }
  if (low) {  // the embeddings' gradients as stored (a sequence's, g zeroed before it)
    round_in_place(stored_, g.io[tok_]);
    if (pos_ >= 0) round_in_place(stored_, g.io[pos_]);
  }
  if (probe) {
    const Index L = body_.layers();
    probe->dx_sq.assign(static_cast<size_t>(L + 1), 0.0);
    for (Index l = 0; l <= L; ++l) probe->dx_sq[static_cast<size_t>(l)] = dx[static_cast<size_t>(l)].squaredNorm();
    probe->bad_forward_layer = -2;
    probe->bad_forward_finite = false;
    for (Index l = 1; l <= L && probe->bad_forward_layer == -2; ++l) {
      const Mat& xl = t.x[static_cast<size_t>(l)];
      if (!all_finite(xl) || xl.cwiseAbs().maxCoeff() > probe->activation_bound ||
          norm_input_above(t.blocks[static_cast<size_t>(l - 1)], l - 1, probe->activation_bound)) {
        probe->bad_forward_layer = static_cast<int>(l - 1);
        probe->bad_forward_finite = all_finite(xl);
      }
    }
    if (probe->bad_forward_layer == -2 && !(all_finite(t.y) && all_finite(z))) probe->bad_forward_layer = -1;
    probe->bad_backward_layer = -2;
    for (Index l = L; l >= 0 && probe->bad_backward_layer == -2; --l)
      if (!all_finite(dx[static_cast<size_t>(l)])) probe->bad_backward_layer = static_cast<int>(std::min(l, L - 1));
    probe_norms(t, *probe);
    if (probe->want_coords) probe->coords = coord_stats(body_, t, z);
  }
  if (trace_out) *trace_out = std::move(t);
  if (dy_out) *dy_out = std::move(dy);
  return out;
}

// Whether the input of a norm inside block l (the sum a Post-LN norm sees: stream plus branch) exceeds the bound
// somewhere: a LayerNorm/RMSNorm row whose RMS 1/r (ε aside) is above it (its largest entry is at least that), a
// DyT input entry above it.
bool LanguageModel::norm_input_above(const BlockCache& b, Index l, double bound) const {
  const bool dyt = body_.config().norm == NormKind::DyT;
  auto above = [&](const NormCache& c) {
    if (dyt) return c.x.size() > 0 && c.x.cwiseAbs().maxCoeff() > bound;
    return c.rstd.size() > 0 && (c.rstd.array() * bound < 1.0).any();
  };
  const auto& units = body_.block(l);
  for (size_t u = 0; u < units.size(); ++u) {
    if (!units[u].spec.pre_norm.empty() && above(b.units[u].pre)) return true;
    if (!units[u].spec.branch_norm.empty() && above(b.units[u].branch)) return true;
    if (!units[u].spec.post_norm.empty() && above(b.units[u].post)) return true;
  }
  return false;
}

// Mean square of each norm's input per token: LayerNorm 1/r² − ε (the variance: its input centred), RMSNorm
// 1/r² − ε (the mean square), DyT the mean square of its saved input.
void LanguageModel::probe_norms(const Trace& t, SeqProbe& p) const {
  p.norm_sq.assign(norm_names_.size(), 0.0);
  p.norm_tokens = static_cast<double>(positions_);
  const double eps = body_.config().norm_eps;
  const bool dyt = body_.config().norm == NormKind::DyT;
  auto ms = [&](const NormCache& c) {
    if (dyt) return c.x.squaredNorm() / static_cast<double>(c.x.cols());
    return (1.0 / c.rstd.array().square() - eps).sum();
  };
  size_t k = 0;
  for (Index l = 0; l < body_.layers(); ++l) {
    const auto& units = body_.block(l);
    const auto& cache = t.blocks[static_cast<size_t>(l)].units;
    for (size_t u = 0; u < units.size(); ++u) {
      if (!units[u].spec.pre_norm.empty()) p.norm_sq[k++] = ms(cache[u].pre);
      if (!units[u].spec.branch_norm.empty()) p.norm_sq[k++] = ms(cache[u].branch);
      if (!units[u].spec.post_norm.empty()) p.norm_sq[k++] = ms(cache[u].post);
    }
  }
  if (body_.has_final_norm()) p.norm_sq[k++] = ms(t.head);
}

std::vector<std::pair<std::string, const Mat*>> LanguageModel::all_params() const {
  std::vector<std::pair<std::string, const Mat*>> out;
  for (const auto& p : body_.params().all()) out.emplace_back(p.name, &p.value);
  for (const auto& p : io_.all()) out.emplace_back(p.name, &p.value);
  return out;
}

}  // namespace gradflow
