// model.cpp — building the stack from a placement recipe, and its forward/backward passes.
#include "gradflow/model/model.hpp"

#include <map>

#include "gradflow/core/cancel.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/model/placement.hpp"
#include "gradflow/ops/elementwise.hpp"

namespace gradflow {
namespace {
// HybridNorm's per-head norms of Q, K, V (the names of its reference code, OLMo's q_norm/k_norm/v_norm)
constexpr const char* kQkvNorms[3] = {"self_attn.q_norm", "self_attn.k_norm", "self_attn.v_norm"};
}  // namespace

NormLayer Model::make_norm(const std::string& prefix, Index width) {
  NormLayer n;
  n.kind = cfg_.norm;
  n.eps = cfg_.norm_eps;
  n.unit_offset = cfg_.norm_offset;
  n.kernels = kernels_;
  if (cfg_.norm == NormKind::DyT) n.alpha = params_.add(prefix + ".alpha", {1}, ParamRole::NormAlpha);
  n.weight = params_.add(prefix + ".weight", {width}, ParamRole::NormWeight);
  if (cfg_.norm != NormKind::RMSNorm) n.bias = params_.add(prefix + ".bias", {width}, ParamRole::NormBias);
  return n;
}

Model::Model(ModelConfig cfg, const KernelOps& kernels, WeightResidency residency, const KernelOps* branch_kernels)
    : cfg_(std::move(cfg)), kernels_(&kernels) {
  // autocast: the branches on the low type's kernels, the float32 tensors (stream, norms) on `kernels`, and each
  // norm that reads a matrix product's output casting its input cotangent to the low type
  const KernelOps* low = branch_kernels ? branch_kernels : kernels_;
  const KernelOps* f32 = branch_kernels ? kernels_ : nullptr;
  const auto reads_low = [&](NormLayer n) {
    n.input_kernels = branch_kernels;
    return n;
  };
  cfg_.validate();
  if (residency == WeightResidency::PerBlock) params_.defer_weight_matrices();
  const Placement& placement = find_placement(cfg_.placement);
  const Index d = cfg_.d_model, dff = cfg_.ff(), e = cfg_.hd(), qw = cfg_.q_width(), qkvw = cfg_.qkv_width();
  ops::HeadsSpec heads;  // the heads' shape and extras (the decoder blocks'; classic nn.MultiheadAttention by default)
  heads.heads = cfg_.heads;
  heads.kv_heads = cfg_.kv();
  heads.head_dim = e;
  heads.scale = cfg_.logit_scale();
  heads.softcap = cfg_.attn_softcap;
  heads.causal = cfg_.causal;
  for (Index l = 0; l < cfg_.layers; ++l) {
    check_cancel();  // each block's parameters are allocated here: a large model takes a while
    const std::string pre = layer_prefix(l);
    // PyTorch's state_dict order: self_attn, linear1, linear2 (a gated branch's linear3), then the norms; a bias
    // under --bias off is absent (index -1), --qkv-bias keeps in_proj_bias
    const auto bias = [&](bool present, const std::string& nm, int64_t size, ParamRole role) {
      return present ? params_.add(pre + nm, {size}, role) : -1;
    };
    const int in_w = params_.add(pre + "self_attn.in_proj_weight", {qkvw, d}, ParamRole::InProjWeight);
    const int in_b = bias(cfg_.in_proj_bias(), "self_attn.in_proj_bias", qkvw, ParamRole::InProjBias);
    const int out_w = params_.add(pre + "self_attn.out_proj.weight", {d, qw}, ParamRole::OutProjWeight);
    const int out_b = bias(cfg_.bias, "self_attn.out_proj.bias", d, ParamRole::OutProjBias);
    const int w1 = params_.add(pre + "linear1.weight", {dff, d}, ParamRole::Linear1Weight);
    const int b1 = bias(cfg_.bias, "linear1.bias", dff, ParamRole::Linear1Bias);
    const int w2 = params_.add(pre + "linear2.weight", {d, dff}, ParamRole::Linear2Weight);
    const int b2 = bias(cfg_.bias, "linear2.bias", d, ParamRole::Linear2Bias);
    const int w3 = cfg_.gated() ? params_.add(pre + "linear3.weight", {dff, d}, ParamRole::Linear3Weight) : -1;
    const int b3 = bias(cfg_.gated() && cfg_.bias, "linear3.bias", dff, ParamRole::Linear3Bias);

    std::vector<UnitSpec> specs = placement.block(cfg_, l);
    // every norm of the block, named once (width d, or d_ff for a norm inside the feed-forward branch)
    std::map<std::string, Index> norm_widths;
    for (const auto& s : specs) {
      for (const auto* nm : {&s.pre_norm, &s.branch_norm, &s.post_norm})
        if (!nm->empty()) norm_widths.emplace(*nm, d);
      if (!s.inner_norm.empty()) norm_widths.emplace(s.inner_norm, qw);  // the concatenated heads
      if (!s.mid_norm.empty()) norm_widths.emplace(s.mid_norm, dff);
      if (s.qkv_norm)
        for (const char* nm : kQkvNorms) norm_widths.emplace(nm, e);
      if (s.kind == SublayerKind::Attention && cfg_.qk_norm != QkNorm::None) {  // Qwen3 per head, OLMo-2 whole
        const bool whole = cfg_.qk_norm == QkNorm::Proj;
        norm_widths.emplace(kQkvNorms[0], whole ? qw : e);
        norm_widths.emplace(kQkvNorms[1], whole ? cfg_.kv() * e : e);
      }
    }
    std::map<std::string, NormLayer> norms;
    for (const auto& [nm, width] : norm_widths) norms.emplace(nm, make_norm(pre + nm, width));
    // learnable scalars and vectors of the recipe, each named once per block
    std::map<std::string, int> extra;
    auto param = [&](const std::string& nm, int64_t size, ParamRole role) {
      auto it = extra.find(nm);
      if (it == extra.end()) it = extra.emplace(nm, params_.add(pre + nm, {size}, role)).first;
      return it->second;
    };

    std::vector<ResidualUnit> units;
    for (const auto& s : specs) {
      ResidualUnit u;
      u.spec = s;
      u.kernels = kernels_;
      // G's output is of the low type but for NormFormer's float32 head gains
      const bool g_low = !(s.kind == SublayerKind::Attention && !s.head_scale.empty());
      if (!s.pre_norm.empty()) u.pre = norms.at(s.pre_norm);
      if (!s.branch_norm.empty()) u.branch = g_low ? reads_low(norms.at(s.branch_norm)) : norms.at(s.branch_norm);
      else if (g_low) u.branch_kernels = branch_kernels;
      if (!s.post_norm.empty()) u.post = norms.at(s.post_norm);
      if (s.kind == SublayerKind::Attention) {
        auto a = std::make_shared<AttentionSublayer>(in_w, in_b, out_w, out_b, heads, d);
        a->kernels = low;
        a->f32_kernels = f32;
        if (!s.inner_norm.empty()) a->inner = reads_low(norms.at(s.inner_norm));
        if (s.qkv_norm)
          for (size_t j = 0; j < 3; ++j) a->qkv_norm[j] = reads_low(norms.at(kQkvNorms[j]));
        if (cfg_.qk_norm != QkNorm::None) {
          for (size_t j = 0; j < 2; ++j) a->qkv_norm[j] = reads_low(norms.at(kQkvNorms[j]));
          a->qkv_norm_whole = cfg_.qk_norm == QkNorm::Proj;
        }
        if (cfg_.rope) {
          a->rotary_dim = ops::rotary_dim_of(e, cfg_.rotary_fraction);
          a->rope_theta = cfg_.rope_theta;
        }
        if (!s.head_scale.empty()) a->head_scale = param(s.head_scale, cfg_.heads, ParamRole::HeadScale);
        u.G = std::move(a);
      } else {
        auto f = std::make_shared<FeedForwardSublayer>(w1, b1, w2, b2, cfg_.ffn_activation(), w3, b3);
        f->kernels = low;
        f->f32_kernels = f32;
        if (!s.mid_norm.empty()) f->mid = reads_low(norms.at(s.mid_norm));
        u.G = std::move(f);
      }
      if (!s.skip_param.empty()) u.skip = param(s.skip_param, d, ParamRole::SkipVector);
      if (s.gate) u.gate = param("resweight", 1, ParamRole::Gate);
      units.push_back(std::move(u));
    }
    if (l == 0) two_streams_ = units.front().spec.dual_stream;
    for (const ResidualUnit& u : units)
      if (u.spec.dual_stream != two_streams_ || (two_streams_ && u.reads_block_input()))
        throw Error("internal: placement " + cfg_.placement + " mixes one- and two-stream units", ErrorKind::Internal);
    blocks_.push_back(std::move(units));
    param_block_.resize(params_.size(), l);
  }
  // a two-stream scheme's head y = x_a + FinalNorm(x_d) needs its norm
  require(!two_streams_ || cfg_.final_norm.value_or(true),
          "--placement " + cfg_.placement + " has no output without its final norm (y = x_a + LN(x_d)); fix: drop "
          "--no-final-norm");
  if (cfg_.final_norm.value_or(placement.final_norm_default(cfg_))) head_ = make_norm("norm", d);
  param_block_.resize(params_.size(), -1);
}

Trace Model::forward(const Mat& x0, const BlockHook* hook) const {
  require(x0.cols() == cfg_.d_model, "input width " + std::to_string(x0.cols()) + " differs from d_model " +
                                         std::to_string(cfg_.d_model) + "; fix: match --d-model to the input");
  Trace t;
  t.x.reserve(blocks_.size() + 1);
  t.x.push_back(initial_state(x0));
  t.blocks.resize(blocks_.size());
  for (Index l = 0; l < layers(); ++l) {
    check_cancel();  // a front end asked to stop (core/cancel.hpp)
    if (hook) (*hook)(l, false);
    t.x.push_back(block_forward(l, t.x.back(), t.blocks[static_cast<size_t>(l)]));
    if (hook) (*hook)(l, true);
  }
  t.y = head_forward(t.x.back(), t.head);
  return t;
}

Mat Model::backward(const Trace& t, const Mat& dy, ParamGrads* g, std::vector<Mat>* dx_layers,
                    const BlockHook* hook) const {
  if (dx_layers) dx_layers->assign(blocks_.size() + 1, Mat());
  Mat dx = head_vjp(t.head, dy, g);
  if (dx_layers) (*dx_layers)[blocks_.size()] = dx;
  for (Index l = layers() - 1; l >= 0; --l) {
    check_cancel();
    if (hook) (*hook)(l, false);
    dx = block_vjp(l, t.blocks[static_cast<size_t>(l)], dx, g);
    if (hook) (*hook)(l, true);
    if (dx_layers) (*dx_layers)[static_cast<size_t>(l)] = dx;
  }
  if (two_streams_) return ops::added(dx.leftCols(cfg_.d_model), dx.rightCols(cfg_.d_model), *kernels_);  // x_a = x_d = x_0
  return dx;
}

Mat Model::initial_state(const Mat& x0) const { return two_streams_ ? stream_pair(x0, x0) : x0; }

Mat Model::jvp_from(const Trace& t, Index l, const Mat& v) const {
  Mat dx = v;
  for (Index k = l; k < layers(); ++k) {
    check_cancel();
    dx = block_jvp(k, t.blocks[static_cast<size_t>(k)], dx);
  }
  return head_jvp(t.head, dx);
}

Mat Model::jvp_with_params(const Trace& t, const Mat& dx0, const ParamGrads& dtheta) const {
  Mat dx = initial_state(dx0);
  for (Index l = 0; l < layers(); ++l) {
    const auto& units = block(l);
    const BlockCache& c = t.blocks[static_cast<size_t>(l)];
    Mat d = dx;
    for (size_t u = 0; u < units.size(); ++u) d = units[u].jvp_with_params(params_, c.units[u], d, dtheta, &dx);
    dx = std::move(d);
  }
  if (two_streams_) {
    const Index d = cfg_.d_model;
    return ops::added(dx.leftCols(d), head_->jvp_with_params(params_, t.head, dx.rightCols(d), dtheta), *kernels_);
  }
  return head_ ? head_->jvp_with_params(params_, t.head, dx, dtheta) : dx;
}

Mat Model::vjp_to(const Trace& t, Index l, const Mat& u) const {
  Mat dx = head_vjp(t.head, u, nullptr);
  for (Index k = layers() - 1; k >= l; --k) {
    check_cancel();
    dx = block_vjp(k, t.blocks[static_cast<size_t>(k)], dx, nullptr);
  }
  return dx;
}

// B2T and parallel units also read the block input x (and send it a gradient); every other unit sees only its own.
Mat Model::block_forward(Index l, const Mat& x, BlockCache& c) const {
  const auto& units = block(l);
  c.units.resize(units.size());
  Mat h = x;
  for (size_t u = 0; u < units.size(); ++u) h = units[u].forward(params_, h, c.units[u], &x);
  return h;
}

std::vector<Mat> Model::unit_inputs(const Trace& trace, Index l) const {
  const Mat& x_block = trace.x[static_cast<size_t>(l)];
  const auto& units = block(l);
  const auto& caches = trace.blocks[static_cast<size_t>(l)].units;
  std::vector<Mat> in{x_block};
  for (size_t u = 0; u < units.size(); ++u) {
    // z = s ⊙ x + c·b [+ x_block]; y = PostNorm(z): block_forward's operations in its order, the branch from the cache
    const ResidualUnit& unit = units[u];
    const Index d = cfg_.d_model;
    const Mat& x = in.back();
    Mat z = unit.add_branch(params_, unit.apply_skip(params_, two_streams_ ? Mat(x.leftCols(d)) : x), caches[u].b);
    if (unit.spec.add_block_input) z = ops::added(std::move(z), x_block, *kernels_);
    if (unit.post) {
      NormCache scratch;
      z = unit.post->forward(params_, z, scratch);
    }
    if (two_streams_)  // y_d = x_d + c·b
      z = stream_pair(z, unit.add_branch(params_, x.rightCols(d), caches[u].b));
    in.push_back(std::move(z));
  }
  return in;
}

Mat Model::block_vjp(Index l, const BlockCache& c, const Mat& dy, ParamGrads* g) const {
  const auto& units = block(l);
  Mat d = dy, d_block;
  for (size_t u = units.size(); u-- > 0;) {
    Mat d_direct;
    d = units[u].vjp(params_, c.units[u], d, g, &d_direct);
    if (d_direct.size() != 0) d_block = d_block.size() == 0 ? d_direct : ops::added(std::move(d_block), d_direct, *kernels_);
  }
  if (d_block.size() != 0) d = ops::added(std::move(d), d_block, *kernels_);
  return d;
}

Mat Model::block_jvp(Index l, const BlockCache& c, const Mat& dx) const {
  const auto& units = block(l);
  Mat d = dx;
  for (size_t u = 0; u < units.size(); ++u) d = units[u].jvp(params_, c.units[u], d, &dx);
  return d;
}

Jacobian Model::block_jacobian(Index l, const BlockCache& c) const {
  const auto& units = block(l);
  Jacobian J = units[0].jacobian(params_, c.units[0]);
  if (units[0].reads_block_input()) J.add(units[0].block_input_jacobian(params_, c.units[0]));
  for (size_t u = 1; u < units.size(); ++u) {
    J = units[u].jacobian(params_, c.units[u]) * std::move(J);
    if (units[u].reads_block_input()) J.add(units[u].block_input_jacobian(params_, c.units[u]));
  }
  return J;
}

// Two streams: y = x_a + FinalNorm(x_d) (ResiDual's output).
Mat Model::head_forward(const Mat& x, NormCache& c) const {
  const Index d = cfg_.d_model;
  if (two_streams_) return ops::added(x.leftCols(d), head_->forward(params_, x.rightCols(d), c), *kernels_);
  return head_ ? head_->forward(params_, x, c) : x;
}

Mat Model::head_vjp(const NormCache& c, const Mat& dy, ParamGrads* g) const {
  if (two_streams_) return stream_pair(dy, head_->vjp(params_, c, dy, g));
  return head_ ? head_->vjp(params_, c, dy, g) : dy;
}

Mat Model::head_jvp(const NormCache& c, const Mat& dx) const {
  const Index d = cfg_.d_model;
  if (two_streams_) return ops::added(dx.leftCols(d), head_->jvp(params_, c, dx.rightCols(d)), *kernels_);
  return head_ ? head_->jvp(params_, c, dx) : dx;
}

Jacobian Model::head_jacobian(const NormCache& c, Index n_tokens) const {
  if (two_streams_) {  // [I, J_norm] per token
    const Jacobian I = Jacobian::identity(n_tokens, cfg_.d_model), Jn = head_->jacobian(params_, c);
    return Jacobian::streams({{&I, &Jn}}, n_tokens, cfg_.d_model);
  }
  return head_ ? head_->jacobian(params_, c) : Jacobian::identity(n_tokens, cfg_.d_model);
}

}  // namespace gradflow
