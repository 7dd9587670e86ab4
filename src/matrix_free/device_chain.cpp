// device_chain.cpp — the VJP chain as a program of KernelOps (see device_chain.hpp for the equations).
#include "gradflow/matrix_free/device_chain.hpp"

#include <cmath>
#include <array>
#include <optional>
#include <utility>

#include "gradflow/kernels/row_math.hpp"
#include "gradflow/core/error.hpp"

namespace gradflow {

// A norm's VJP data in the backend's memory.
struct DeviceChain::Norm {
  int kind = rows::kLayerNorm;
  Index rows = 0, width = 0;      // the cache's rows (n; n·h for a per-head norm) and the normalized width
  const double* xhat = nullptr;  // (n, d)
  const double* rstd = nullptr;  // (n); null for DyT
  const double* gamma = nullptr;  // (d)
  double alpha = 0;               // DyT's α
};

// One residual unit's VJP data in the backend's memory.
struct DeviceChain::Unit {
  SublayerKind kind = SublayerKind::Attention;
  std::optional<Norm> pre, branch, post;
  double kappa = 1, coefficient = 1, skip = 1;  // κ, c = λ·gate, s (scalar form)
  const double* skip_vector = nullptr;          // (d) learnable s, or null
  bool add_block_input = false;
  bool parallel = false;  // the branch reads the block input (the parallel residual)
  const double *qkv = nullptr, *P = nullptr, *w_in = nullptr, *w_out = nullptr;  // attention
  Index heads = 0;
  const double* head_gain = nullptr;       // (d) NormFormer's c_h over each head's columns, or null
  std::optional<Norm> inner;               // Sub-LN's norm between the heads and out_proj
  std::array<std::optional<Norm>, 3> qkv_norm;  // HybridNorm's per-head norms of Q, K, V
  const double *fprime = nullptr, *w1 = nullptr, *w2 = nullptr;  // feed-forward (gated: fprime = z3 ⊙ act'(z1))
  const double *gate = nullptr, *w3 = nullptr;  // a gated feed-forward's act(z1) and up projection, or null
  std::optional<Norm> mid;                 // the feed-forward mid norm (width d_ff)
};

namespace {

// kAux1, kAux2: (rows, d) for the sublayers' inner norms (inner, QKV); kAuxFF: (rows, d_ff) for the mid norm; each
// allocated only when the model has such a norm
// kStreamA, kStreamA2, kStreamD: (rows, d) for ResiDual's two streams apart (allocated only for such a model); kSwap
// is swapped with the stacks, so it has their size (rows, w)
// kDa3: (rows, d_ff) for a gated feed-forward's second product (allocated only for such a model)
enum Work : int {
  kSwap, kDz, kDb, kDg, kDu, kDpre, kDblock, kDo, kDqkv, kDp, kDa, kAux1, kAux2, kAuxFF, kStreamA, kStreamA2, kStreamD,
  kDa3, kWorkCount
};

}  // namespace

std::string DeviceChain::unsupported(const Model& model) {
  for (Index l = 0; l < model.layers(); ++l)
    for (const ResidualUnit& u : model.block(l)) {
      const auto* a = dynamic_cast<const AttentionSublayer*>(u.G.get());
      if (!a && !dynamic_cast<const FeedForwardSublayer*>(u.G.get()))
        return "an unknown sublayer";  // every placement today has only these two (a new sublayer must be added here)
      if (a && a->decoder_extras()) {  // the decoder blocks' attention runs on the CPU's engines only (issue 32)
        const ModelConfig& c = model.config();
        std::string what;
        const auto add = [&](bool on, const std::string& w) { if (on) what += (what.empty() ? "" : ", ") + w; };
        add(c.rope, "rotary positions (--rope)");
        add(c.kv() != c.heads, "grouped-query attention (--kv-heads)");
        add(c.hd() * c.heads != c.d_model, "--head-dim");
        add(c.attn_softcap > 0, "--attn-softcap");
        add(c.attn_scale > 0, "--attn-scale");
        add(c.attn_scale <= 0 && c.param.scales_width(), "the attention scale of --parametrization " +
                                                             to_string(c.param.kind));
        add(c.qk_norm != QkNorm::None, "--qk-norm");
        return what.empty() ? "the decoder blocks' attention" : what;
      }
    }
  return "";
}

DeviceChain::DeviceChain(const KernelOps& ops, const Model& model, const Trace& trace, Index max_copies)
    : ops_(ops), model_(model), n_(trace.x[0].rows()), d_(model.d_model()), w_(model.state_width()),
      ff_(model.config().ff()),
      max_copies_(max_copies) {
  const std::string why = unsupported(model);
  if (!why.empty()) throw Error("internal: DeviceChain cannot run a model with " + why, ErrorKind::Internal);
  if (max_copies < 1) throw Error("internal: DeviceChain with max_copies < 1", ErrorKind::Internal);
  const ParamStore& p = model.params();
  bool aux = false, aux_ff = false, gated = false;  // whether kAux1/kAux2, kAuxFF and kDa3 are needed
  for (Index l = 0; l < model.layers(); ++l) {
    const std::string at = "block " + std::to_string(l);
    std::vector<Unit> units;
    const auto& cache = trace.blocks[static_cast<size_t>(l)].units;
    for (size_t i = 0; i < model.block(l).size(); ++i) {
      const ResidualUnit& ru = model.block(l)[i];
      const UnitCache& c = cache[i];
      Unit u;
      u.kind = ru.G->kind();
      if (ru.pre) u.pre = norm(*ru.pre, c.pre, at);
      if (ru.branch) u.branch = norm(*ru.branch, c.branch, at);
      if (ru.post) u.post = norm(*ru.post, c.post, at);
      u.kappa = ru.spec.pre_norm_scale;
      u.coefficient = ru.branch_coefficient(p);
      u.skip = ru.spec.skip_scale;
      if (ru.skip >= 0) u.skip_vector = put(p[ru.skip], "the skip vector of " + at);
      u.add_block_input = ru.spec.add_block_input;
      u.parallel = ru.spec.parallel;
      if (u.kind == SublayerKind::Attention) {
        const auto& a = static_cast<const AttentionSublayer&>(*ru.G);
        const auto& bc = std::get<AttentionBranchCache>(c.g);
        const auto& ac = bc.attn;  // with QKV norms its qkv holds the normalized [Q | K | V] the heads read
        u.heads = a.heads();
        if (a.head_scale >= 0)
          u.head_gain = put(Mat(a.head_gains(p[a.head_scale])), "the per-head attention gains of " + at);
        if (a.inner) u.inner = norm(*a.inner, bc.inner, at);
        for (size_t j = 0; j < 3; ++j)
          if (a.qkv_norm[j]) u.qkv_norm[j] = norm(*a.qkv_norm[j], bc.qkv[j], at);
        aux |= a.inner.has_value() || a.qkv_norm[0].has_value() || a.head_scale >= 0;
        u.qkv = put(ac.qkv, "the attention cache of " + at);
        Mat P(u.heads * n_, n_);  // the heads' probabilities stacked: head h in rows h·n ..
        for (Index h = 0; h < u.heads; ++h) P.middleRows(h * n_, n_) = ac.P[static_cast<size_t>(h)];
        u.P = put(P, "the attention probabilities of " + at);
        u.w_in = put(p[a.in_weight()], "the attention weights of " + at);
        u.w_out = put(p[a.out_weight()], "the attention weights of " + at);
      } else {
        const auto& f = static_cast<const FeedForwardSublayer&>(*ru.G);
        const auto& fc = std::get<FeedForwardCache>(c.g);
        u.fprime = put(f.gated() ? fc.glu.up_fprime : fc.fprime, "the feed-forward cache of " + at);
        if (f.mid) u.mid = norm(*f.mid, fc.mid, at);
        aux_ff |= f.mid.has_value();
        u.w1 = put(p[f.linear1_weight()], "the feed-forward weights of " + at);
        u.w2 = put(p[f.linear2_weight()], "the feed-forward weights of " + at);
        if (f.gated()) {
          u.gate = put(fc.glu.gate, "the feed-forward cache of " + at);
          u.w3 = put(p[f.linear3_weight()], "the feed-forward weights of " + at);
          gated = true;
        }
      }
      units.push_back(std::move(u));
    }
    blocks_.push_back(std::move(units));
  }
  if (model.has_final_norm()) {
    // the head's norm is the model's "norm." prefix; its layer comes from the model (Model::head_vjp)
    head_ = std::make_unique<Norm>(norm(model.head_norm(), trace.head, "the final norm"));
  }
  const Index rows = max_copies * n_;
  for (auto& s : stacks_) s.m = ops_.alloc(rows * w_, "a stack of " + std::to_string(max_copies) + " cotangents");
  const Index dual = model.two_streams() ? rows * d_ : 1;
  const Index sizes[kWorkCount] = {rows * w_, rows * d_, rows * d_, rows * d_, rows * d_, rows * d_, rows * d_,
                                   rows * d_, rows * 3 * d_, max_copies * n_ * n_, rows * ff_,
                                   aux ? rows * d_ : 1, aux ? rows * d_ : 1, aux_ff ? rows * ff_ : 1,
                                   dual, dual, dual, gated ? rows * ff_ : 1};
  for (Index size : sizes)
    work_.push_back(ops_.alloc(size, "the work buffers of " + std::to_string(max_copies) + " cotangents"));
}

DeviceChain::~DeviceChain() = default;

Index DeviceChain::layers() const { return model_.layers(); }

const double* DeviceChain::put(const Mat& host, const std::string& what) {
  kept_.push_back(ops_.alloc(host.size(), what));
  ops_.upload(host.data(), kept_.back()->data(), host.size());
  return kept_.back()->data();
}

DeviceChain::Norm DeviceChain::norm(const NormLayer& layer, const NormCache& c, const std::string& what) {
  const ParamStore& p = model_.params();
  Norm nm;
  nm.kind = layer.kind == NormKind::LayerNorm ? rows::kLayerNorm : layer.kind == NormKind::RMSNorm ? rows::kRMSNorm
                                                                                                   : rows::kDyT;
  nm.rows = c.xhat.rows();
  nm.width = c.xhat.cols();
  nm.xhat = put(c.xhat, "the norm caches of " + what);
  if (nm.kind != rows::kDyT) nm.rstd = put(Mat(c.rstd.transpose()), "the norm caches of " + what);
  nm.gamma = put(layer.gamma(p), "the norm weights of " + what);
  if (nm.kind == rows::kDyT) nm.alpha = p[layer.alpha](0, 0);
  return nm;
}

void DeviceChain::set_identity(int stack, Index start, Index k, Index width) {
  if ((width != d_ && width != w_) || k < 1 || k > max_copies_)
    throw Error("internal: DeviceChain::set_identity outside its stacks", ErrorKind::Internal);
  Stack& s = stacks_[stack];
  ops_.identity_rows(s.m->data(), start, k, n_, width);
  s.copies = k;
  s.width = width;
  s.exp2 = 0;
}

void DeviceChain::set_stack(int stack, const Mat& m, long exp2) {
  if ((m.cols() != d_ && m.cols() != w_) || m.rows() % n_ != 0 || m.rows() / n_ > max_copies_ || m.rows() == 0)
    throw Error("internal: DeviceChain::set_stack outside its stacks", ErrorKind::Internal);
  Stack& s = stacks_[stack];
  ops_.upload(m.data(), s.m->data(), m.size());
  s.copies = m.rows() / n_;
  s.width = m.cols();
  s.exp2 = exp2;
}

Mat DeviceChain::stack_to_host(int stack, long* exp2) const {
  const Stack& s = stacks_[stack];
  Mat m(s.copies * n_, s.width);
  ops_.download(s.m->data(), m.data(), m.size());
  if (exp2) *exp2 = s.exp2;
  return m;
}

Mat DeviceChain::gram(int stack, long* exp2) const {
  const Stack& s = stacks_[stack];
  const Index k = s.copies, N = n_ * s.width;
  // row-major (k·n, width) is (k, N) with leading dimension N: G = W Wᵀ
  const std::unique_ptr<KernelArray> g = ops_.alloc(k * k, "the Gram matrix of " + std::to_string(k) + " probes");
  ops_.gemm(k, k, N, 1.0, {s.m->data(), N}, {s.m->data(), N, 0, true}, 0.0, g->data(), k, 0, 1);
  Mat G(k, k);
  ops_.download(g->data(), G.data(), k * k);
  if (exp2) *exp2 = s.exp2;
  return G;
}

void DeviceChain::add_squares(int stack, SquareSum& sum) const {
  const Stack& s = stacks_[stack];
  sum.add(ops_.sum_squares(s.m->data(), s.copies * n_ * s.width), 2 * s.exp2);
}

void DeviceChain::keep_in_range(Stack& s, const char* dir, const std::string& what, Index block) const {
  const Index count = s.copies * n_ * s.width;
  const double amax = ops_.max_abs(s.m->data(), count);
  if (!std::isfinite(amax)) throw chain_nonfinite_error(dir, what, block);  // as JacobianChain::keep_in_range
  const int e = rebalance_exponent(amax);  // as rebalance(): exact power-of-two scaling outside 2^±256
  if (e != 0) {
    ops_.axpby(count, std::ldexp(1.0, -e), s.m->data(), 0.0, s.m->data());
    s.exp2 += e;
  }
}

void DeviceChain::vjp(int stack, Index l) { vjp(stack, l, streamed_block_name(l)); }

void DeviceChain::vjp(int stack, Index l, const std::string& what) {
  Stack& s = stacks_[stack];
  const Index k = s.copies, rows = k * n_, count = rows * d_;
  if (l == model_.layers() - 1 && model_.two_streams()) {
    // y = x_a + FinalNorm(x_d)  ->  dx_a = dy, dx_d = J_normᵀ dy: the (rows, d) stack becomes the state's (rows, 2d)
    ops_.copy_2d(s.m->data(), d_, work(kSwap), w_, rows, d_);
    const double* dd = s.m->data();
    if (head_) {
      norm_vjp(*head_, s.m->data(), work(kStreamD), k);
      dd = work(kStreamD);
    }
    ops_.copy_2d(dd, d_, work(kSwap) + d_, w_, rows, d_);
    std::swap(s.m, work_[kSwap]);
    s.width = w_;
    keep_in_range(s, "VJP", what, -1);
  } else if (l == model_.layers() - 1 && head_) {
    norm_vjp(*head_, s.m->data(), work(kSwap), k);
    std::swap(s.m, work_[kSwap]);
    keep_in_range(s, "VJP", what, -1);
  }
  if (model_.two_streams()) {
    dual_vjp(s, l);
    keep_in_range(s, "VJP", what, l);
    return;
  }
  const std::vector<Unit>& units = blocks_[static_cast<size_t>(l)];
  bool reads_block = false;  // a B2T or parallel unit reads the block input
  for (const Unit& u : units) reads_block |= u.add_block_input || u.parallel;
  if (reads_block) ops_.axpby(count, 0.0, s.m->data(), 0.0, work(kDblock));  // the stack is finite: 0·x = 0
  for (size_t i = units.size(); i-- > 0;) {
    unit_vjp(units[i], s.m->data(), work(kSwap), work(kDblock), k, nullptr);
    std::swap(s.m, work_[kSwap]);
  }
  if (reads_block) ops_.axpby(count, 1.0, work(kDblock), 1.0, s.m->data());
  keep_in_range(s, "VJP", what, l);
}

void DeviceChain::jvp_block(int stack, Index l, const std::string& what) {
  Stack& s = stacks_[stack];
  if (model_.two_streams()) {
    dual_jvp(s, l);
    keep_in_range(s, "JVP", what, l);
    return;
  }
  const Index k = s.copies, count = k * n_ * d_;
  const std::vector<Unit>& units = blocks_[static_cast<size_t>(l)];
  bool reads_block = false;  // a B2T or parallel unit reads the block input
  for (const Unit& u : units) reads_block |= u.add_block_input || u.parallel;
  if (reads_block) ops_.axpby(count, 1.0, s.m->data(), 0.0, work(kDblock));  // the block's input tangent (B2T, parallel)
  for (const Unit& u : units) {
    unit_jvp(u, s.m->data(), work(kSwap), work(kDblock), k, nullptr);
    std::swap(s.m, work_[kSwap]);
  }
  keep_in_range(s, "JVP", what, l);
}

void DeviceChain::head_jvp(int stack, const std::string& what) {
  Stack& s = stacks_[stack];
  if (model_.two_streams()) {
    // y = x_a + FinalNorm(x_d)  ->  dy = dx_a + J_norm dx_d: the state's (rows, 2d) stack becomes (rows, d)
    const Index rows = s.copies * n_;
    ops_.copy_2d(s.m->data() + d_, w_, work(kStreamD), d_, rows, d_);
    double* t = work(kStreamD);
    if (head_) {
      norm_jvp(*head_, work(kStreamD), work(kStreamA2), s.copies);
      t = work(kStreamA2);
    }
    ops_.copy_2d(s.m->data(), w_, work(kSwap), d_, rows, d_);
    ops_.axpby(rows * d_, 1.0, t, 1.0, work(kSwap));
    std::swap(s.m, work_[kSwap]);
    s.width = d_;
    keep_in_range(s, "JVP", what, -1);
    return;
  }
  if (!head_) return;
  norm_jvp(*head_, s.m->data(), work(kSwap), s.copies);
  std::swap(s.m, work_[kSwap]);
  keep_in_range(s, "JVP", what, -1);
}

void DeviceChain::dual_vjp(Stack& s, Index l) {
  const Index k = s.copies, rows = k * n_;
  // [dy_a | dy_d] apart; dy_d passes through the block unchanged (y_d = x_d + Σ c·b) and joins every branch's cotangent
  ops_.copy_2d(s.m->data(), w_, work(kStreamA), d_, rows, d_);
  ops_.copy_2d(s.m->data() + d_, w_, work(kStreamD), d_, rows, d_);
  int a = kStreamA, a2 = kStreamA2;
  const std::vector<Unit>& units = blocks_[static_cast<size_t>(l)];
  for (size_t i = units.size(); i-- > 0;) {
    unit_vjp(units[i], work(a), work(a2), nullptr, k, work(kStreamD));
    std::swap(a, a2);
  }
  ops_.copy_2d(work(a), d_, s.m->data(), w_, rows, d_);  // dx_a back; dx_d = dy_d is already there
}

void DeviceChain::dual_jvp(Stack& s, Index l) {
  const Index k = s.copies, rows = k * n_;
  ops_.copy_2d(s.m->data(), w_, work(kStreamA), d_, rows, d_);
  ops_.copy_2d(s.m->data() + d_, w_, work(kStreamD), d_, rows, d_);
  int a = kStreamA, a2 = kStreamA2;
  for (const Unit& u : blocks_[static_cast<size_t>(l)]) {
    unit_jvp(u, work(a), work(a2), nullptr, k, work(kStreamD));  // dx_d += c·(the branch's tangent)
    std::swap(a, a2);
  }
  ops_.copy_2d(work(a), d_, s.m->data(), w_, rows, d_);
  ops_.copy_2d(work(kStreamD), d_, s.m->data() + d_, w_, rows, d_);
}

void DeviceChain::norm_vjp(const Norm& nm, const double* dy, double* dx, Index copies) const {
  ops_.norm_vjp(nm.kind, nm.xhat, nm.rstd, nm.gamma, nm.alpha, nm.rows, nm.width, dy, dx, copies * nm.rows);
}

void DeviceChain::norm_jvp(const Norm& nm, const double* dx, double* dy, Index copies) const {
  ops_.norm_jvp(nm.kind, nm.xhat, nm.rstd, nm.gamma, nm.alpha, nm.rows, nm.width, dx, dy, copies * nm.rows);
}

void DeviceChain::unit_jvp(const Unit& u, const double* dx, double* dy, const double* dx_block, Index copies,
                           double* dx_d) {
  const Index rows = copies * n_, count = rows * d_;
  // u = κ·PreNorm(x) (parallel: of x_block), g = G(u), b = BranchNorm(g), z = s ⊙ x + c·b [+ x_block], y = PostNorm(z)
  const double* src = u.parallel ? dx_block : dx;
  const double* du = src;
  if (u.pre) {
    norm_jvp(*u.pre, src, work(kDpre), copies);
    if (u.kappa != 1.0) ops_.axpby(count, u.kappa, work(kDpre), 0.0, work(kDpre));
    du = work(kDpre);
  }
  if (u.kind == SublayerKind::Attention) attention_jvp(u, du, work(kDu), copies);
  else feed_forward_jvp(u, du, work(kDu), copies);
  const double* db = work(kDu);
  if (u.branch) {
    norm_jvp(*u.branch, work(kDu), work(kDg), copies);
    db = work(kDg);
  }
  if (dx_d) ops_.axpby(count, u.coefficient, db, 1.0, dx_d);  // y_d = x_d + c·b
  double* dz = u.post ? work(kDz) : dy;
  if (u.skip_vector) ops_.scale_columns(dx, u.skip_vector, dz, rows, d_);
  else ops_.axpby(count, u.skip, dx, 0.0, dz);
  ops_.axpby(count, u.coefficient, db, 1.0, dz);
  if (u.add_block_input) ops_.axpby(count, 1.0, dx_block, 1.0, dz);
  if (u.post) norm_jvp(*u.post, dz, dy, copies);
}

void DeviceChain::unit_vjp(const Unit& u, const double* dy, double* dx, double* d_block, Index copies,
                           const double* dy_d) {
  const Index rows = copies * n_, count = rows * d_;
  // in the forward pass this was: y = PostNorm(z), z = s ⊙ x + c·b [+ x_block]
  const double* dz = dy;
  if (u.post) {
    norm_vjp(*u.post, dy, work(kDz), copies);
    dz = work(kDz);
  }
  if (u.add_block_input) ops_.axpby(count, 1.0, dz, 1.0, d_block);
  if (u.skip_vector) ops_.scale_columns(dz, u.skip_vector, dx, rows, d_);
  else ops_.axpby(count, u.skip, dz, 0.0, dx);
  ops_.axpby(count, u.coefficient, dz, 0.0, work(kDb));
  if (dy_d) ops_.axpby(count, u.coefficient, dy_d, 1.0, work(kDb));  // y_d = x_d + c·b: b's cotangent is c·(dz + dy_d)
  // b = BranchNorm(G(u)), u = κ·PreNorm(x)
  const double* dg = work(kDb);
  if (u.branch) {
    norm_vjp(*u.branch, work(kDb), work(kDg), copies);
    dg = work(kDg);
  }
  if (u.kind == SublayerKind::Attention) attention_vjp(u, dg, work(kDu), copies);
  else feed_forward_vjp(u, dg, work(kDu), copies);
  double* dsrc = u.parallel ? d_block : dx;  // parallel: the branch read x_block
  if (!u.pre) {
    ops_.axpby(count, 1.0, work(kDu), 1.0, dsrc);
    return;
  }
  if (u.kappa != 1.0) ops_.axpby(count, u.kappa, work(kDu), 0.0, work(kDu));
  norm_vjp(*u.pre, work(kDu), work(kDpre), copies);
  ops_.axpby(count, 1.0, work(kDpre), 1.0, dsrc);
}

void DeviceChain::attention_vjp(const Unit& u, const double* dg, double* du, Index copies) {
  const Index n = n_, d = d_, rows = copies * n, e = d / u.heads;
  double *dO = work(kDo), *dqkv = work(kDqkv), *dP = work(kDp);
  // y = A ⊙ c_h (NormFormer)  ->  dA = dy ⊙ c_h
  const double* dA = dg;
  if (u.head_gain) {
    ops_.scale_columns(dg, u.head_gain, work(kAux1), rows, d);
    dA = work(kAux1);
  }
  // A = O' W_outᵀ + b_out, O' = InnerNorm(O) (Sub-LN) or O  ->  dO' = dA W_out, dO = J_innerᵀ dO'
  if (u.inner) {
    ops_.gemm(rows, d, d, 1.0, {dA, d}, {u.w_out, d}, 0.0, work(kAux2), d, 0, 1);
    norm_vjp(*u.inner, work(kAux2), dO, copies);
  } else {
    ops_.gemm(rows, d, d, 1.0, {dA, d}, {u.w_out, d}, 0.0, dO, d, 0, 1);
  }
  for (Index h = 0; h < u.heads; ++h) {
    const double* Ph = u.P + h * n * n;
    const double *Q = u.qkv + h * e, *K = u.qkv + d + h * e, *V = u.qkv + 2 * d + h * e;
    const GemmOperand dOh{dO + h * e, d, n * d};  // copy c's (n, e) block of head h
    // O_h = P V_h  ->  dP = dO_h V_hᵀ, dV_h = Pᵀ dO_h
    ops_.gemm(n, n, e, 1.0, dOh, {V, 3 * d, 0, true}, 0.0, dP, n, n * n, copies);
    ops_.gemm(n, e, n, 1.0, {Ph, n, 0, true}, dOh, 0.0, dqkv + 2 * d + h * e, 3 * d, n * 3 * d, copies);
    // P = softmax(S), S = Q_h K_hᵀ/√e  ->  dS = P ⊙ (dP − rowsum(P ⊙ dP))/√e, dQ_h = dS K_h, dK_h = dSᵀ Q_h
    ops_.softmax_vjp(Ph, n, dP, copies, 1.0 / std::sqrt(static_cast<double>(e)));
    ops_.gemm(n, e, n, 1.0, {dP, n, n * n}, {K, 3 * d, 0}, 0.0, dqkv + h * e, 3 * d, n * 3 * d, copies);
    ops_.gemm(n, e, n, 1.0, {dP, n, n * n, true}, {Q, 3 * d, 0}, 0.0, dqkv + d + h * e, 3 * d, n * 3 * d, copies);
  }
  // [Q | K | V] = N(x W_inᵀ + b_in) with HybridNorm's per-head norms  ->  each third through its norm's VJP
  qkv_norms(u, dqkv, copies, false);
  // [Q | K | V] = x W_inᵀ + b_in  ->  dx = d[Q | K | V] W_in
  ops_.gemm(rows, d, 3 * d, 1.0, {dqkv, 3 * d}, {u.w_in, d}, 0.0, du, d, 0, 1);
}

void DeviceChain::attention_jvp(const Unit& u, const double* du, double* dg, Index copies) {
  const Index n = n_, d = d_, rows = copies * n, e = d / u.heads;
  const double inv_sqrt_e = 1.0 / std::sqrt(static_cast<double>(e));
  double *dO = work(kDo), *dqkv = work(kDqkv), *dS = work(kDp);
  // [Q | K | V] = x W_inᵀ + b_in  ->  d[Q | K | V] = dx W_inᵀ
  ops_.gemm(rows, 3 * d, d, 1.0, {du, d}, {u.w_in, d, 0, true}, 0.0, dqkv, 3 * d, 0, 1);
  qkv_norms(u, dqkv, copies, true);  // HybridNorm: each third through its per-head norm's JVP
  for (Index h = 0; h < u.heads; ++h) {
    const double* Ph = u.P + h * n * n;
    const double *Q = u.qkv + h * e, *K = u.qkv + d + h * e, *V = u.qkv + 2 * d + h * e;
    // S = Q_h K_hᵀ/√e  ->  dS = (dQ_h K_hᵀ + Q_h dK_hᵀ)/√e
    ops_.gemm(n, n, e, inv_sqrt_e, {dqkv + h * e, 3 * d, n * 3 * d}, {K, 3 * d, 0, true}, 0.0, dS, n, n * n, copies);
    ops_.gemm(n, n, e, inv_sqrt_e, {Q, 3 * d, 0}, {dqkv + d + h * e, 3 * d, n * 3 * d, true}, 1.0, dS, n, n * n, copies);
    // P = softmax(S)  ->  dP = P ⊙ (dS − rowsum(P ⊙ dS)) (the VJP's row formula, scale 1)
    ops_.softmax_vjp(Ph, n, dS, copies, 1.0);
    // O_h = P V_h  ->  dO_h = dP V_h + P dV_h
    ops_.gemm(n, e, n, 1.0, {dS, n, n * n}, {V, 3 * d, 0}, 0.0, dO + h * e, d, n * d, copies);
    ops_.gemm(n, e, n, 1.0, {Ph, n, 0}, {dqkv + 2 * d + h * e, 3 * d, n * 3 * d}, 1.0, dO + h * e, d, n * d, copies);
  }
  // A = O' W_outᵀ + b_out, O' = InnerNorm(O) or O  ->  dA = (J_inner dO) W_outᵀ;  y = A ⊙ c_h  ->  dy = dA ⊙ c_h
  const double* dOp = dO;
  if (u.inner) {
    norm_jvp(*u.inner, dO, work(kAux1), copies);
    dOp = work(kAux1);
  }
  ops_.gemm(rows, d, d, 1.0, {dOp, d}, {u.w_out, d, 0, true}, 0.0, dg, d, 0, 1);
  if (u.head_gain) ops_.scale_columns(dg, u.head_gain, dg, rows, d);
}

void DeviceChain::qkv_norms(const Unit& u, double* dqkv, Index copies, bool jvp) {
  const Index rows = copies * n_, d = d_;
  for (Index j = 0; j < 3; ++j) {
    const std::optional<Norm>& nm = u.qkv_norm[static_cast<size_t>(j)];
    if (!nm) continue;
    // third j of the (rows, 3d) stack, contiguous: (rows, d) = (rows·h, d/h), row r·h + head as the norm's cache
    ops_.copy_2d(dqkv + j * d, 3 * d, work(kAux1), d, rows, d);
    if (jvp) norm_jvp(*nm, work(kAux1), work(kAux2), copies);
    else norm_vjp(*nm, work(kAux1), work(kAux2), copies);
    ops_.copy_2d(work(kAux2), d, dqkv + j * d, 3 * d, rows, d);
  }
}

void DeviceChain::feed_forward_jvp(const Unit& u, const double* du, double* dg, Index copies) {
  const Index rows = copies * n_, d = d_, ff = ff_;
  double* dz = work(kDa);
  // z1 = x W1ᵀ + b1, y = act(z1) W2ᵀ + b2  ->  dz1 = dx W1ᵀ, dy = (act'(z1) ⊙ dz1) W2ᵀ
  // gated, y = (act(z1) ⊙ z3) W2ᵀ + b2, z3 = x W3ᵀ + b3  ->  dy = (z3 ⊙ act'(z1) ⊙ dz1 + act(z1) ⊙ dz3) W2ᵀ
  ops_.gemm(rows, ff, d, 1.0, {du, d}, {u.w1, d, 0, true}, 0.0, dz, ff, 0, 1);
  ops_.multiply_tiled(dz, u.fprime, n_, ff, rows);
  if (u.w3) {
    ops_.gemm(rows, ff, d, 1.0, {du, d}, {u.w3, d, 0, true}, 0.0, work(kDa3), ff, 0, 1);
    ops_.multiply_tiled(work(kDa3), u.gate, n_, ff, rows);
    ops_.axpby(rows * ff, 1.0, work(kDa3), 1.0, dz);
  }
  if (u.mid) {  // y = MidNorm(act(z1)) W2ᵀ + b2
    norm_jvp(*u.mid, dz, work(kAuxFF), copies);
    dz = work(kAuxFF);
  }
  ops_.gemm(rows, d, ff, 1.0, {dz, ff}, {u.w2, ff, 0, true}, 0.0, dg, d, 0, 1);
}

void DeviceChain::feed_forward_vjp(const Unit& u, const double* dg, double* du, Index copies) {
  const Index rows = copies * n_, d = d_, ff = ff_;
  double* da = work(kDa);
  // y = act(x W1ᵀ + b1) W2ᵀ + b2  ->  da = dy W2 ⊙ act'(z1), dx = da W1
  // gated, y = (act(z1) ⊙ z3) W2ᵀ + b2  ->  dh = dy W2, dx = (dh ⊙ z3 ⊙ act'(z1)) W1 + (dh ⊙ act(z1)) W3
  ops_.gemm(rows, ff, d, 1.0, {dg, d}, {u.w2, ff}, 0.0, da, ff, 0, 1);
  if (u.mid) {  // y = MidNorm(act(z1)) W2ᵀ + b2  ->  d act = J_midᵀ (dy W2)
    norm_vjp(*u.mid, da, work(kAuxFF), copies);
    da = work(kAuxFF);
  }
  if (u.w3) {
    ops_.axpby(rows * ff, 1.0, da, 0.0, work(kDa3));
    ops_.multiply_tiled(work(kDa3), u.gate, n_, ff, rows);
  }
  ops_.multiply_tiled(da, u.fprime, n_, ff, rows);
  ops_.gemm(rows, d, ff, 1.0, {da, ff}, {u.w1, d}, 0.0, du, d, 0, 1);
  if (u.w3) ops_.gemm(rows, d, ff, 1.0, {work(kDa3), ff}, {u.w3, d}, 1.0, du, d, 0, 1);
}

DeviceChainOperator::DeviceChainOperator(DeviceChain& chain, Index from, Index to, std::string what)
    : chain_(&chain), from_(from), to_(to), what_(std::move(what)) {
  if (from < 0 || to > chain.layers() || from >= to)
    throw Error("internal: device chain " + std::to_string(from) + ".." + std::to_string(to), ErrorKind::Internal);
}

Scaled DeviceChainOperator::jvp(Scaled v) const {
  chain_->set_stack(CotangentStacks::kPStack, v.m, v.exp2);
  for (Index l = from_; l < to_; ++l) chain_->jvp_block(CotangentStacks::kPStack, l, what_);
  if (to_ == chain_->layers()) chain_->head_jvp(CotangentStacks::kPStack, what_);
  Scaled out;
  out.m = chain_->stack_to_host(CotangentStacks::kPStack, &out.exp2);
  return out;
}

Scaled DeviceChainOperator::vjp(Scaled u) const {
  chain_->set_stack(CotangentStacks::kPStack, u.m, u.exp2);
  for (Index l = to_ - 1; l >= from_; --l) chain_->vjp(CotangentStacks::kPStack, l, what_);  // the head first at L−1
  Scaled out;
  out.m = chain_->stack_to_host(CotangentStacks::kPStack, &out.exp2);
  return out;
}

}  // namespace gradflow
