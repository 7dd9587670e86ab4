// test_device_chain.cpp — the primitive kernels (kernels/kernel_ops.hpp) and the VJP chain written in them
// (matrix_free/device_chain.hpp), on every backend built: each kernel against a direct Eigen computation or the
// model's own op (the norm VJPs against ops::layernorm_vjp & co., which also checks row_math.hpp, the arithmetic the
// GPU kernels share); the chain's B_lᵀ·U against the model's VJPs (JacobianChain) for every placement it covers, with
// the power-of-two rescaling and a NaN named by its block; B_l·V (the JVP direction) likewise; the streamed sweep on
// the chain against the CPU engine's; Hutchinson's probe sweep on the chain against the CPU's; Lanczos on the chain's
// operators against Lanczos on the model's.
// The CPU instances (tag [backend]) check the bodies and the CPU kernels themselves to kCrossTol; the CUDA instances
// (tag [cuda]) compare with the CPU to kBackendTol and skip visibly without a GPU (backends.hpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "backends.hpp"
#include "gradflow/kernels/row_math.hpp"
#include "gradflow/core/rng.hpp"
#include "gradflow/matrix_free/chain_singular.hpp"
#include "gradflow/matrix_free/device_chain.hpp"
#include "gradflow/matrix_free/hutchinson.hpp"
#include "gradflow/matrix_free/jacobian_chain.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/model/placement.hpp"
#include "gradflow/ops/dyt.hpp"
#include "gradflow/ops/layernorm.hpp"
#include "gradflow/ops/norm.hpp"
#include "gradflow/ops/rmsnorm.hpp"
#include "gradflow/run/context.hpp"
#include "small_model.hpp"
#include "tolerances.hpp"

using namespace gradflow;
using namespace gradflow::test;

namespace {

double tol(BackendKind kind) { return kind == BackendKind::Cpu ? kCrossTol : kBackendTol; }

Mat random_mat(Index r, Index c, const std::string& stream, double scale = 1.0) {
  Mat m(r, c);
  Rng(31, stream).fill_normal(m, scale);
  return m;
}

double rel_err(const Mat& got, const Mat& want) {
  REQUIRE(got.rows() == want.rows());
  REQUIRE(got.cols() == want.cols());
  const double w = want.norm();
  return w == 0 ? (got - want).norm() : (got - want).norm() / w;
}

// A host matrix in the backend's memory and back.
struct OnDevice {
  const KernelOps& ops;
  std::unique_ptr<KernelArray> a;
  Index rows, cols;
  OnDevice(const KernelOps& o, const Mat& m) : ops(o), a(o.alloc(m.size(), "test")), rows(m.rows()), cols(m.cols()) {
    ops.upload(m.data(), a->data(), m.size());
  }
  double* p() { return a->data(); }
  Mat host() const {
    Mat m(rows, cols);
    ops.download(a->data(), m.data(), m.size());
    return m;
  }
};

// The kernels of the model's forward and parameter gradients, each against its formula written directly here (not
// through the ops, which run on these kernels): bias rows, column sums, dot, the three norms' forward (LayerNorm also
// on a row whose squares overflow) and parameter gradients, the softmax (causal), the activations in closed form.
void check_forward_kernels(const KernelOps& ops, double t) {
  const Index rows = 12, tokens = 4, d = 6;
  const Mat X = random_mat(rows, d, "fX", 2.0), b = random_mat(1, d, "fb");
  OnDevice y(ops, X), bd(ops, b);
  ops.add_row(y.p(), bd.p(), rows, d);
  CHECK(rel_err(y.host(), Mat(X.rowwise() + b.row(0))) < t);
  OnDevice acc(ops, b);
  ops.add_column_sums(y.p(), rows, d, acc.p());
  CHECK(rel_err(acc.host(), Mat(b + (X.rowwise() + b.row(0)).colwise().sum())) < t);
  const Mat Y = random_mat(rows, d, "fY");
  OnDevice xd(ops, X), yd(ops, Y);
  CHECK(std::abs(ops.dot(xd.p(), yd.p(), X.size()) - X.cwiseProduct(Y).sum()) <= t * X.cwiseAbs().cwiseProduct(Y.cwiseAbs()).sum());
  // norms: LayerNorm (x − μ)/√(σ² + ε), RMSNorm x/√(mean x² + ε), DyT tanh(αx); one LayerNorm row at 1e200
  Mat x = random_mat(tokens, d, "fx", 3.0);
  x.row(2) *= 1e200;
  const double eps = 1e-5, alpha = 0.7;
  const Mat gamma = random_mat(1, d, "fg"), dy = random_mat(rows, d, "fdy");
  for (const int kind : {rows::kLayerNorm, rows::kRMSNorm, rows::kDyT}) {
    INFO("norm kind " << kind);
    Mat want(tokens, d);
    Vec want_r(tokens);
    for (Index i = 0; i < tokens; ++i) {
      const long double scale = kind == rows::kDyT ? 1.0L : 1e200L;  // long double holds the squares of 1e200
      RowVec row = x.row(i);
      if (kind == rows::kDyT) {
        want.row(i) = (alpha * row.array()).tanh();
        continue;
      }
      long double mean = 0, m = 0;
      for (Index j = 0; j < d; ++j) mean += kind == rows::kLayerNorm ? row(j) / scale : 0.0L;
      mean /= d;
      for (Index j = 0; j < d; ++j) m += (row(j) / scale - mean) * (row(j) / scale - mean);
      m /= d;
      const long double r = 1.0L / std::sqrt(m + eps / (scale * scale));  // in units of the scaled row
      want_r(i) = static_cast<double>(r / scale);
      for (Index j = 0; j < d; ++j) want(i, j) = static_cast<double>((row(j) / scale - mean) * r);
    }
    OnDevice in(ops, x), xhat(ops, Mat::Zero(tokens, d)), rstd(ops, Mat::Zero(tokens, 1));
    ops.norm_forward(kind, in.p(), tokens, d, eps, alpha, xhat.p(), rstd.p());
    CHECK(rel_err(xhat.host(), want) < t);
    if (kind != rows::kDyT) CHECK(rel_err(rstd.host(), Mat(want_r)) < t);
    // parameter gradients of 3 stacked cotangent copies: dγ = Σ dy ⊙ x̂, dβ = Σ dy, DyT dα = Σ dy ⊙ γ ⊙ (1 − x̂²) ⊙ x
    Mat dg = Mat::Zero(1, d), db = Mat::Zero(1, d), want_dg = dg, want_db = db;
    double want_da = 0.25;
    const Mat xs = kind == rows::kDyT ? x : Mat(x.array() / 1e200);  // DyT's α-gradient reads x (finite products)
    for (Index r = 0; r < rows; ++r) {
      want_dg += dy.row(r).cwiseProduct(want.row(r % tokens));
      want_db += dy.row(r);
      for (Index j = 0; j < d; ++j)
        want_da += dy(r, j) * gamma(0, j) * (1.0 - want(r % tokens, j) * want(r % tokens, j)) * xs(r % tokens, j);
    }
    OnDevice xh(ops, want), xin(ops, xs), gd(ops, gamma), dyd(ops, dy), dgd(ops, dg), dbd(ops, db),
        dad(ops, Mat::Constant(1, 1, 0.25));
    ops.norm_param_vjp(kind, xh.p(), xin.p(), gd.p(), tokens, d, dyd.p(), rows, dgd.p(), dbd.p(), dad.p());
    CHECK(rel_err(dgd.host(), want_dg) < t);
    CHECK(rel_err(dbd.host(), want_db) < t);
    CHECK(dad.host()(0, 0) == (kind == rows::kDyT ? Approx(want_da).epsilon(t) : Approx(0.25)));
  }
  // softmax rows of 2 stacked (n, n) blocks, plain and causal (exact zeros above the diagonal)
  const Mat S = random_mat(2 * tokens, tokens, "fS", 4.0);
  for (const bool causal : {false, true}) {
    Mat want = S;
    for (Index r = 0; r < want.rows(); ++r) {
      const Index len = causal ? r % tokens + 1 : tokens;
      const RowVec e = (S.row(r).head(len).array() - S.row(r).head(len).maxCoeff()).exp();
      want.row(r).setZero();
      want.row(r).head(len) = e / e.sum();
    }
    OnDevice sd(ops, S);
    ops.softmax_rows(sd.p(), want.rows(), tokens, causal);
    INFO("causal " << causal);
    CHECK(rel_err(sd.host(), want) < t);
    if (causal) CHECK(sd.host()(0, 1) == 0.0);
  }
  // activations in closed form: relu, gelu ½z(1 + erf(z/√2)), gelu-tanh ½z(1 + tanh(√(2/π)(z + 0.044715 z³))),
  // silu z/(1 + e^(−z)), tanh (the attention soft-cap's)
  const Mat Z = random_mat(3, 7, "fZ", 3.0);
  const auto gelu = [](double z) { return 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0))); };
  const auto gelu_tanh = [](double z) {
    return 0.5 * z * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (z + 0.044715 * z * z * z)));
  };
  const auto silu = [](double z) { return z / (1.0 + std::exp(-z)); };
  for (const int kind : {rows::kRelu, rows::kGelu, rows::kGeluTanh, rows::kSilu, rows::kTanh}) {
    Mat want_a(Z.rows(), Z.cols()), want_f(Z.rows(), Z.cols());
    for (Index i = 0; i < Z.size(); ++i) {
      const double z = Z.data()[i];
      const auto f = [&](double v) {
        return kind == rows::kGelu ? gelu(v) : kind == rows::kSilu ? silu(v) : kind == rows::kTanh ? std::tanh(v)
                                                                                                    : gelu_tanh(v);
      };
      want_a.data()[i] = kind == rows::kRelu ? std::max(z, 0.0) : f(z);
      // the derivative by the four-point stencil of the closed form (relu: the step)
      const double h = 1e-3;
      want_f.data()[i] = kind == rows::kRelu ? (z > 0 ? 1.0 : 0.0)
                                             : (8 * (f(z + h) - f(z - h)) - (f(z + 2 * h) - f(z - 2 * h))) / (12 * h);
    }
    OnDevice zd(ops, Z), ad(ops, Mat::Zero(Z.rows(), Z.cols())), fd(ops, Mat::Zero(Z.rows(), Z.cols()));
    ops.activation(kind, zd.p(), Z.size(), ad.p(), fd.p());
    INFO("activation " << kind);
    CHECK(rel_err(ad.host(), want_a) < t);
    CHECK(rel_err(fd.host(), want_f) < kFdTol);
  }
}

void check_kernels(BackendKind kind) {
  const auto be = backend_or_skip(kind);
  const KernelOps& ops = be->kernels();
  const double t = tol(kind);
  INFO(to_string(kind));
  // gemm: every transpose combination, a batch of 3 with one operand shared (stride 0), β = 0 over NaN and β ≠ 0
  const Index m = 5, n = 4, k = 3, batch = 3;
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      const Mat A = random_mat(batch * (ta ? k : m), ta ? m : k, "A");
      const Mat B = random_mat(tb ? n : k, tb ? k : n, "B");  // shared by the batch
      for (const double beta : {0.0, 0.5}) {
        Mat C0 = random_mat(batch * m, n, "C");
        if (beta == 0.0) C0(1, 1) = std::numeric_limits<double>::quiet_NaN();  // ignored when β = 0
        OnDevice a(ops, A), b(ops, B), c(ops, C0);
        ops.gemm(m, n, k, 2.0, {a.p(), A.cols(), A.cols() * (ta ? k : m), ta}, {b.p(), B.cols(), 0, tb}, beta, c.p(),
                 n, m * n, batch);
        Mat want(batch * m, n);
        for (Index i = 0; i < batch; ++i) {
          const Mat Ai = A.middleRows(i * (ta ? k : m), ta ? k : m);
          const Mat opA = ta ? Mat(Ai.transpose()) : Ai, opB = tb ? Mat(B.transpose()) : B;
          want.middleRows(i * m, m) = 2.0 * opA * opB + (beta == 0.0 ? Mat::Zero(m, n) : Mat(beta * C0.middleRows(i * m, m)));
        }
        INFO("gemm ta " << ta << " tb " << tb << " beta " << beta);
        CHECK(rel_err(c.host(), want) < t);
      }
    }
  // the norm VJPs against the model's ops (stacked: 3 copies of n = 4 rows)
  const Index rows = 12, tokens = 4, d = 6;
  const Mat x = random_mat(tokens, d, "x", 3.0), gamma = random_mat(1, d, "gamma"), beta = random_mat(1, d, "beta");
  const Mat dy = random_mat(rows, d, "dy");
  for (const NormKind nk : {NormKind::LayerNorm, NormKind::RMSNorm, NormKind::DyT}) {
    NormCache c;
    Mat want;
    const double alpha = 0.7;
    if (nk == NormKind::LayerNorm) {
      ops::layernorm_forward(x, gamma, beta, 1e-5, c);
      want = ops::layernorm_vjp(c, gamma, dy, nullptr, nullptr);
    } else if (nk == NormKind::RMSNorm) {
      ops::rmsnorm_forward(x, gamma, 1e-5, c);
      want = ops::rmsnorm_vjp(c, gamma, dy, nullptr);
    } else {
      ops::dyt_forward(x, alpha, gamma, beta, c);
      want = ops::dyt_vjp(c, alpha, gamma, dy, nullptr, nullptr, nullptr);
    }
    const int code = nk == NormKind::LayerNorm ? rows::kLayerNorm : nk == NormKind::RMSNorm ? rows::kRMSNorm : rows::kDyT;
    OnDevice xhat(ops, c.xhat), g(ops, gamma), in(ops, dy), out(ops, Mat::Zero(rows, d));
    std::unique_ptr<OnDevice> rstd;
    if (nk != NormKind::DyT) rstd = std::make_unique<OnDevice>(ops, Mat(c.rstd.transpose()));
    ops.norm_vjp(code, xhat.p(), rstd ? rstd->p() : nullptr, g.p(), alpha, tokens, d, in.p(), out.p(), rows);
    INFO("norm " << to_string(nk));
    CHECK(rel_err(out.host(), want) < t);
  }
  // softmax VJP of 2 stacked (n, n) blocks, a causal P (zeros above the diagonal)
  Mat P = random_mat(tokens, tokens, "P").cwiseAbs();
  for (Index i = 0; i < tokens; ++i) {
    P.row(i).tail(tokens - i - 1).setZero();
    P.row(i) /= P.row(i).sum();
  }
  const Mat dP = random_mat(2 * tokens, tokens, "dP");
  Mat want_ds(2 * tokens, tokens);
  for (Index c = 0; c < 2; ++c)
    for (Index i = 0; i < tokens; ++i) {
      const RowVec r = dP.row(c * tokens + i);
      want_ds.row(c * tokens + i) = 0.5 * P.row(i).cwiseProduct((r.array() - P.row(i).dot(r)).matrix());
    }
  OnDevice pd(ops, P), ds(ops, dP);
  ops.softmax_vjp(pd.p(), tokens, ds.p(), 2, 0.5);
  CHECK(rel_err(ds.host(), want_ds) < t);
  // element-wise: tiled product, axpby, column scaling, identity rows
  const Mat X = random_mat(rows, d, "X"), F = random_mat(tokens, d, "F"), Y = random_mat(rows, d, "Y");
  OnDevice xd(ops, X), fd(ops, F), yd(ops, Y);
  ops.multiply_tiled(xd.p(), fd.p(), tokens, d, rows);
  Mat want_x = X;
  for (Index r = 0; r < rows; ++r) want_x.row(r) = want_x.row(r).cwiseProduct(F.row(r % tokens));
  CHECK(rel_err(xd.host(), want_x) < t);
  ops.axpby(rows * d, 2.0, xd.p(), -1.0, yd.p());
  CHECK(rel_err(yd.host(), 2.0 * want_x - Y) < t);
  ops.scale_columns(yd.p(), fd.p(), yd.p(), rows, d);  // in place, with F's first row as s
  CHECK(rel_err(yd.host(), Mat((2.0 * want_x - Y).array().rowwise() * F.row(0).array())) < t);
  OnDevice u(ops, random_mat(2 * tokens, d, "U"));
  ops.identity_rows(u.p(), 5, 2, tokens, d);  // rows 5 and 6 of the (n·d)-identity
  Mat want_u = Mat::Zero(2 * tokens, d);
  want_u(0 * tokens + 5 / d, 5 % d) = 1.0;
  want_u(1 * tokens + 6 / d, 6 % d) = 1.0;
  CHECK(u.host() == want_u);
  // copy_2d between leading dimensions: the middle third of a (rows, 3d) matrix out, then into its last third
  const Mat Wide = random_mat(rows, 3 * d, "wide");
  OnDevice wide(ops, Wide), part(ops, Mat::Zero(rows, d));
  ops.copy_2d(wide.p() + d, 3 * d, part.p(), d, rows, d);
  CHECK(part.host() == Mat(Wide.middleCols(d, d)));
  ops.copy_2d(part.p(), d, wide.p() + 2 * d, 3 * d, rows, d);
  Mat want_wide = Wide;
  want_wide.middleCols(2 * d, d) = Wide.middleCols(d, d);
  CHECK(wide.host() == want_wide);
  // reductions: max |x|, NaN for any NaN or Inf; sum of squares
  OnDevice yy(ops, Y);
  CHECK(ops.max_abs(yy.p(), Y.size()) == Y.cwiseAbs().maxCoeff());
  CHECK(std::abs(ops.sum_squares(yy.p(), Y.size()) - Y.squaredNorm()) <= t * Y.squaredNorm());
  for (const double bad : {std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::infinity()}) {
    Mat Z = Y;
    Z(7, 2) = bad;
    OnDevice z(ops, Z);
    CHECK(std::isnan(ops.max_abs(z.p(), Z.size())));
  }
  check_forward_kernels(ops, t);
}

// The model of a placement with a forward trace: small (d = 8, h = 2, n = 4), 3 layers.
struct Traced {
  Model model;
  AnalysisContext ctx;
  Traced(ModelConfig cfg, Index n, uint64_t seed)
      : model(std::move(cfg)), ctx(init_then(model, seed), random_normal(seed, "input", n, model.d_model()),
                                   options(n), make_backend(BackendKind::Cpu), nullptr, seed) {}
  // The model's initialization, then every parameter moved by 0.3·N(0, 1): no gain, norm weight or skip vector stays
  // at its initial 1 (or bias at 0), where a kernel that skipped it would go unnoticed.
  static Model& init_then(Model& m, uint64_t seed) {
    InitConfig init;
    init.seed = seed;
    initialize(m, init);
    for (Param& q : m.params().all())
      q.value += 0.3 * random_normal(seed, "perturb " + q.name, q.value.rows(), q.value.cols());
    return m;
  }
  static AnalysisOptions options(Index n) {
    AnalysisOptions o;
    o.seq_len = n;
    o.progress = false;
    return o;
  }
};

void check_chain(BackendKind kind) {
  const auto be = backend_or_skip(kind);
  const double t = tol(kind);
  const Index n = 4, L = 3, copies = 3;
  int covered = 0;
  std::set<std::string> uncovered;
  int index = 0;
  for (const auto& p : placements())
    for (const int variant : {0, 1, 2}) {  // plain; causal with GELU; a gated feed-forward without biases
      const bool causal = variant == 1;
      ModelConfig cfg = small_model(p->name(), L, causal ? Activation::Gelu : Activation::Relu);
      cfg.causal = causal;
      if (causal) cfg.norm = p->name() == "pre" ? NormKind::RMSNorm : p->name() == "sandwich" ? NormKind::DyT : cfg.norm;
      if (variant == 2) {
        cfg.ffn = index % 2 == 0 ? FeedForwardKind::SwiGLU : FeedForwardKind::GeGLU;
        cfg.bias = false;
        cfg.qkv_bias = index % 3 == 0;
      }
      const Traced tr(cfg, n, 5);
      const std::string why = DeviceChain::unsupported(tr.model);
      INFO(to_string(kind) << " " << p->name() << " variant " << variant << " " << to_string(cfg.norm) << " "
                           << to_string(cfg.ffn));
      if (!why.empty()) {  // named, and the chain refuses it
        uncovered.insert(p->name());
        REQUIRE_THROWS(DeviceChain(be->kernels(), tr.model, tr.ctx.trace, copies));
        continue;
      }
      DeviceChain chain(be->kernels(), tr.model, tr.ctx.trace, copies);
      for (Index l = L - 1; l >= 0; --l) {
        const JacobianChain B(tr.model, tr.ctx.trace, l, l + 1, "B");
        // B_l's output side: the state's (2d for ResiDual's two streams), y's (d) for B_{L−1}
        REQUIRE(chain.out_width(l) == B.out_width());
        const Mat U = random_mat(copies * n, B.out_width(), "U" + std::to_string(l));
        const Scaled want = B.vjp(Scaled{U, 0});
        chain.set_stack(CotangentStacks::kPStack, U);
        chain.vjp(CotangentStacks::kPStack, l);
        long e = 0;
        const Mat got = chain.stack_to_host(CotangentStacks::kPStack, &e);
        INFO("B_" << l);
        CHECK(e == want.exp2);
        CHECK(rel_err(got, want.m) < t);
      }
      // the tangent direction: B_l·V block by block (the head after block L−1), as the model's JVPs
      for (Index l = 0; l < L; ++l) {
        const JacobianChain B(tr.model, tr.ctx.trace, l, l + 1, "B");
        REQUIRE(chain.state_width() == B.width());
        const Mat V = random_mat(copies * n, B.width(), "V" + std::to_string(l));
        const Scaled want = B.jvp(Scaled{V, 0});
        chain.set_stack(CotangentStacks::kPStack, V);
        chain.jvp_block(CotangentStacks::kPStack, l, "B");
        if (l == L - 1) chain.head_jvp(CotangentStacks::kPStack, "B");
        long e = 0;
        const Mat got = chain.stack_to_host(CotangentStacks::kPStack, &e);
        INFO("JVP B_" << l);
        CHECK(e == want.exp2);
        CHECK(rel_err(got, want.m) < t);
      }
      // the whole sweep: the exact norms of every P_l and B_l as the CPU engine gives them
      const StreamedSweep want = streamed_frobenius(tr.model, tr.ctx.trace, 5, true);
      const StreamedSweep got = streamed_frobenius(chain, 3, true);
      for (Index l = 0; l < L; ++l) {
        CHECK(std::abs(got.product[static_cast<size_t>(l)].value - want.product[static_cast<size_t>(l)].value) <=
              t * want.product[static_cast<size_t>(l)].value);
        CHECK(std::abs(got.block[static_cast<size_t>(l)].value - want.block[static_cast<size_t>(l)].value) <=
              t * want.block[static_cast<size_t>(l)].value);
      }
      // Hutchinson's sweep (the same probes): every estimate and its standard error (the Gram matrix's off-diagonal),
      // in one chunk and in chunks of two probes (--probe-chunk 2, a split run's tasks)
      for (const Index per_chunk : {Index(0), Index(2)}) {
        const HutchinsonSweep hw = hutchinson_frobenius(tr.model, tr.ctx.trace, copies, 7, true, {}, per_chunk);
        const HutchinsonSweep hg = hutchinson_frobenius(chain, copies, 7, true, {}, per_chunk);
        for (Index l = 0; l < L; ++l)
          for (const auto& [g, w] : {std::pair{hg.product[static_cast<size_t>(l)], hw.product[static_cast<size_t>(l)]},
                                     std::pair{hg.block[static_cast<size_t>(l)], hw.block[static_cast<size_t>(l)]}}) {
            INFO("Hutchinson, chunks of " << per_chunk << " (0: one), layer " << l);
            CHECK(g.probes == copies);
            CHECK(std::abs(g.value - w.value) <= t * w.value);
            CHECK(std::abs(g.std_error - w.std_error) <= t * w.std_error);
          }
      }
      ++covered;
      index += variant == 2;
    }
  // every placement, ResiDual's two streams and the parallel residual included
  CHECK(uncovered.empty());
  CHECK(covered == 3 * static_cast<int>(placements().size() - uncovered.size()));
}

void check_range_and_nan(BackendKind kind) {
  const auto be = backend_or_skip(kind);
  const Traced tr(small_model("post", 2), 4, 9);
  DeviceChain chain(be->kernels(), tr.model, tr.ctx.trace, 2);
  // a cotangent of 2^600: rescaled by a power of two as the CPU's chain does (the same exponent)
  const Mat U = random_mat(8, 8, "big", std::ldexp(1.0, 600));
  const Scaled want = JacobianChain(tr.model, tr.ctx.trace, 0, 1, "B").vjp(Scaled{U, 0});
  REQUIRE(want.exp2 != 0);
  chain.set_stack(CotangentStacks::kBStack, U);
  chain.vjp(CotangentStacks::kBStack, 0);
  long e = 0;
  const Mat got = chain.stack_to_host(CotangentStacks::kBStack, &e);
  CHECK(e == want.exp2);
  CHECK(rel_err(got, want.m) < tol(kind));
  Mat bad = U;
  bad(3, 3) = std::numeric_limits<double>::quiet_NaN();
  chain.set_stack(CotangentStacks::kBStack, bad);
  try {
    chain.vjp(CotangentStacks::kBStack, 1);
    FAIL("no error");
  } catch (const Error& err) {
    CHECK(err.kind() == ErrorKind::Numeric);
    CHECK_THAT(err.what(), Catch::Contains("B_1 = dx_2/dx_1") && Catch::Contains("fix:"));
  }
}

// Lanczos (chain_singular.hpp) on the device chain's operators: σ_max of P_0, B_1, B_2 and ‖B_l − I‖₂ as on the model's.
void check_lanczos(BackendKind kind) {
  const auto be = backend_or_skip(kind);
  for (const char* placement : {"post", "pre", "resi-dual"}) {  // ResiDual: rectangular P_0 and B_2 (state 2N → N)
    const Traced tr(small_model(placement, 3), 4, 11);
    DeviceChain chain(be->kernels(), tr.model, tr.ctx.trace, 1);
    INFO(to_string(kind) << " " << placement);
    for (const auto& [from, to] : {std::pair<Index, Index>{0, 3}, {1, 2}, {2, 3}}) {
      const JacobianChain host(tr.model, tr.ctx.trace, from, to, "J");
      const DeviceChainOperator dev(chain, from, to, "J");
      REQUIRE(dev.size() == host.size());
      REQUIRE(dev.out_size() == host.out_size());
      const ChainSingular a = chain_top_singular(host, 2, 5), b = chain_top_singular(dev, 2, 5);
      REQUIRE(a.values.size() == 2);
      REQUIRE(b.values.size() == 2);
      for (Index i = 0; i < 2; ++i) CHECK(std::abs(b.values(i) - a.values(i)) <= kLanczosTol * a.values(0));
      if (to == from + 1 && host.square()) {
        const ChainSingular c = chain_top_singular_minus_identity(host, 1, 5), e = chain_top_singular_minus_identity(dev, 1, 5);
        CHECK(std::abs(e.values(0) - c.values(0)) <= kLanczosTol * c.values(0));
      }
    }
  }
}

}  // namespace

TEST_CASE("kernels: GEMM, norm and softmax VJPs, element-wise ops and reductions (CPU)", "[backend]") {
  check_kernels(BackendKind::Cpu);
}
TEST_CASE("device chain: B_l's VJP and Hutchinson's sweep on the CPU kernels equal the model's for every covered "
          "placement", "[backend]") {
  check_chain(BackendKind::Cpu);
}
TEST_CASE("device chain: power-of-two rescaling as the CPU chain, NaN named by its block (CPU)", "[backend]") {
  check_range_and_nan(BackendKind::Cpu);
}
TEST_CASE("device chain: Lanczos on its operators equals Lanczos on the model's (CPU)", "[backend]") {
  check_lanczos(BackendKind::Cpu);
}

#ifdef GRADFLOW_HAVE_CUDA
TEST_CASE("kernels cuda: every kernel against the CPU's", "[cuda]") { check_kernels(BackendKind::Cuda); }
TEST_CASE("device chain cuda: B_l's VJP, the streamed norms and Hutchinson's sweep against the CPU", "[cuda]") {
  check_chain(BackendKind::Cuda);
}
TEST_CASE("device chain cuda: rescaling and NaN", "[cuda]") { check_range_and_nan(BackendKind::Cuda); }
TEST_CASE("device chain cuda: Lanczos on the GPU's operators", "[cuda]") { check_lanczos(BackendKind::Cuda); }
#endif

TEST_CASE("device chain: the decoder blocks' attention is refused by name, before any work", "[backend]") {
  ModelConfig cfg = small_model("pre", 2);
  CHECK(DeviceChain::unsupported(Model(cfg)).empty());
  cfg.rope = true;
  cfg.kv_heads = 1;
  CHECK(DeviceChain::unsupported(Model(cfg)) == "rotary positions (--rope), grouped-query attention (--kv-heads)");
  cfg = small_model("pre", 2);
  cfg.attn_softcap = 30;
  CHECK(DeviceChain::unsupported(Model(cfg)) == "--attn-softcap");
  cfg = small_model("pre", 2);
  cfg.qk_norm = QkNorm::Head;
  CHECK(DeviceChain::unsupported(Model(cfg)) == "--qk-norm");
  cfg = small_model("pre", 2);
  cfg.head_dim = 8;
  CHECK(DeviceChain::unsupported(Model(cfg)) == "--head-dim");
}
