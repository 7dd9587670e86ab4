// test_lm.cpp — the language model around the blocks (src/train/lm.cpp): every parameter gradient of the batch
// cross-entropy (embeddings, output projection, tied or not, and every block parameter) against central finite
// differences; and one training step's block gradients equal what analyze's AnalysisContext computes for the same
// weights, input x_0 and loss (L = Σ g ⊙ y with g = dCE/dy): the same code path.
#include <catch2/catch.hpp>

#include <cmath>

#include "derivative_checks.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/run/context.hpp"
#include "gradflow/train/lm.hpp"
#include "gradflow/train/tasks.hpp"
#include "tolerances.hpp"

using namespace gradflow;
using gradflow::test::rel_err;

namespace {

ModelConfig tiny(const std::string& placement) {
  ModelConfig m;
  m.placement = placement;
  m.layers = 2;
  m.d_model = 8;
  m.heads = 2;
  m.d_ff = 12;
  m.activation = Activation::Gelu;  // smooth: finite differences see no kinks
  m.causal = true;
  return m;
}

double batch_loss(const LanguageModel& lm, const std::vector<Sequence>& b) {
  double s = 0;
  int T = 0;
  for (const auto& q : b) {
    const SeqLoss l = lm.evaluate(q);
    s += l.loss_sum;
    T += l.targets;
  }
  return s / T;
}

LmGrads batch_grad(const LanguageModel& lm, const std::vector<Sequence>& b) {
  int T = 0;
  for (const auto& q : b)
    for (int t : q.targets) T += t >= 0;
  LmGrads g = lm.make_grads();
  for (const auto& q : b) lm.forward_backward(q, 1.0 / T, g);
  return g;
}

// Central differences of the batch loss w.r.t. every entry of `p`, compared with `analytic`.
void check_tensor(LanguageModel& lm, const std::vector<Sequence>& b, const std::string& name, Mat& p, const Mat& analytic) {
  Mat fd(p.rows(), p.cols());
  const double h = test::kFdStep;
  for (Index k = 0; k < p.size(); ++k) {
    const double v = p.data()[k];
    p.data()[k] = v + h;
    const double lp = batch_loss(lm, b);
    p.data()[k] = v - h;
    const double lm_ = batch_loss(lm, b);
    p.data()[k] = v;
    fd.data()[k] = (lp - lm_) / (2 * h);
  }
  INFO(name << ": |analytic| = " << analytic.norm() << ", |fd| = " << fd.norm());
  if (fd.norm() < test::kFdZeroTol) {
    REQUIRE(analytic.norm() < test::kZeroGradTol);  // e.g. the attention key bias: exactly zero in exact arithmetic
  } else {
    REQUIRE(rel_err(analytic, fd) < test::kFdTol);
  }
}

// gemma: the gemma2 preset's block (RMSNorm with scale 1 + w, GeGLU, RoPE, soft-cap, no biases) and its embedding
// scale √d, tied as Gemma is
// param: a parametrization's multipliers (readout m_N^(-1), branch m_L^(-α), μP's logit scale) in the graph
void check_all_gradients(const std::string& placement, bool tied, const std::string& task_name, bool gemma = false,
                         const Parametrization& param = {}) {
  TaskConfig tc;
  tc.name = task_name;
  tc.vocab = 7;
  tc.seq_len = 6;
  const Task task(tc, 3);
  ModelConfig cfg = tiny(placement);
  cfg.param = param;
  if (gemma) {
    cfg.norm = NormKind::RMSNorm;
    cfg.norm_offset = true;
    cfg.embed_scale_sqrt_d = true;
    cfg.ffn = FeedForwardKind::GeGLU;
    cfg.rope = true;
    cfg.attn_softcap = 2.0;
    cfg.bias = false;
  }
  LanguageModel lm(cfg, tc.vocab, tc.seq_len, tied);
  InitConfig init;
  init.seed = 5;
  lm.initialize(init);
  // move LayerNorm gains/biases away from 1 and 0 so their gradients are generic
  for (auto& p : lm.body().params().all())
    if (p.name.find("norm") != std::string::npos) p.value.array() += 0.2 * random_normal(9, p.name, p.value.rows(), p.value.cols()).array();
  const auto batch = task.batch(3, "fd", 2);
  if (gemma) {  // a RoPE block has no position embedding: x_0[i] = √d·E[s_i]
    REQUIRE_FALSE(lm.io_params().has("pos_embedding.weight"));
    const Mat x0 = lm.embed(batch[0].tokens);
    const Mat& E = lm.io_params().at("tok_embedding.weight");
    for (Index i = 0; i < x0.rows(); ++i)
      REQUIRE(rel_err(x0.row(i), std::sqrt(8.0) * E.row(batch[0].tokens[static_cast<size_t>(i)])) < test::kCrossTol);
  }
  const LmGrads g = batch_grad(lm, batch);
  INFO(placement << (tied ? " tied" : " untied") << " task " << task_name);
  for (size_t i = 0; i < lm.io_params().size(); ++i)
    check_tensor(lm, batch, lm.io_params().all()[i].name, lm.io_params()[static_cast<int>(i)], g.io[static_cast<int>(i)]);
  for (size_t i = 0; i < lm.body().params().size(); ++i)
    check_tensor(lm, batch, lm.body().params().all()[i].name, lm.body().params()[static_cast<int>(i)],
                 g.body[static_cast<int>(i)]);
}

}  // namespace

TEST_CASE("train lm: cross-entropy row: value and softmax", "[train][quick]") {
  RowVec z(3);
  z << 1.0, 2.0, 3.0;
  RowVec p;
  const double l = cross_entropy_row(z, 0, p);
  const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  REQUIRE(std::abs(l - (lse - 1.0)) < test::kClosedFormChainTol);
  REQUIRE(std::abs(p.sum() - 1.0) < test::kClosedFormTol);
  REQUIRE(std::abs(p(2) - std::exp(3.0 - lse)) < test::kClosedFormTol);
}

TEST_CASE("train lm: every parameter gradient vs finite differences (pre, untied, copy)", "[train]") {
  check_all_gradients("pre", false, "copy");
}

TEST_CASE("train lm: every parameter gradient vs finite differences (post, tied, markov)", "[train]") {
  check_all_gradients("post", true, "markov");
}

TEST_CASE("train lm: every parameter gradient vs finite differences (completep: readout, branch, logit multipliers)",
          "[train]") {
  Parametrization p;
  p.kind = ParametrizationKind::CompleteP;
  p.base_width = 2;  // m_N = 4: readout x 1/4, logits x sqrt(e0)/e
  p.base_depth = 1;  // m_L = 2: branches x 1/2
  check_all_gradients("pre", false, "copy", false, p);
  check_all_gradients("post", true, "markov", false, p);
  check_all_gradients("pre", true, "copy", true, p);  // the gemma2 block (RMSNorm 1 + w, GeGLU, RoPE, soft-cap)
}

TEST_CASE("train lm: every parameter gradient vs finite differences (sandwich, untied, recall)", "[train]") {
  check_all_gradients("sandwich", false, "recall");
}

TEST_CASE("train lm: every parameter gradient vs finite differences (gemma2 block, embeddings times sqrt(d), tied)",
          "[train]") {
  check_all_gradients("sandwich", true, "copy", true);
}

TEST_CASE("train lm: a training step's block gradient equals analyze's for the same weights and loss", "[train][quick]") {
  for (const std::string placement : {"post", "pre", "sandwich", "deepnorm", "rezero"}) {
    INFO(placement);
    TaskConfig tc;
    tc.vocab = 9;
    tc.seq_len = 8;
    const Task task(tc, 1);
    ModelConfig mc = tiny(placement);
    mc.activation = Activation::Relu;
    LanguageModel lm(mc, tc.vocab, tc.seq_len, false);
    InitConfig init;
    init.seed = 11;
    lm.initialize(init);
    const Sequence s = task.sample(1, "eq", 0);
    int T = 0;
    for (int t : s.targets) T += t >= 0;
    LmGrads g = lm.make_grads();
    SeqProbe probe;
    Trace trace;
    Mat dy;
    lm.forward_backward(s, 1.0 / T, g, &probe, &trace, &dy);
    // analyze's context on the same model, input and cotangent (loss "dot": L = Σ g ⊙ y, so dL/dy = g)
    AnalysisOptions opts;
    opts.loss = "dot";
    opts.engine = Engine::GradientsOnly;
    opts.seq_len = tc.seq_len;
    const AnalysisContext ctx(lm.body(), lm.embed(s.tokens), opts, make_backend(BackendKind::Cpu), &dy);
    REQUIRE(ctx.trace.y == trace.y);
    for (Index l = 0; l <= lm.body().layers(); ++l) {
      INFO("layer " << l);
      REQUIRE(ctx.dx[static_cast<size_t>(l)].squaredNorm() == probe.dx_sq[static_cast<size_t>(l)]);
    }
    for (size_t i = 0; i < lm.body().params().size(); ++i) {
      INFO(lm.body().params().all()[i].name);
      REQUIRE(ctx.grads[static_cast<int>(i)] == g.body[static_cast<int>(i)]);  // bit for bit
    }
  }
}

TEST_CASE("train lm: a RoPE block has no position embedding, and hf-normal draws the embedding and head N(0, 0.02)",
          "[train][quick]") {
  ModelConfig cfg = tiny("pre");
  cfg.rope = true;
  cfg.d_model = 32;
  LanguageModel lm(cfg, 64, 8, false);
  InitConfig init;
  init.scheme = "hf-normal";
  init.seed = 3;
  lm.initialize(init);
  CHECK_FALSE(lm.io_params().has("pos_embedding.weight"));
  for (const char* name : {"tok_embedding.weight", "lm_head.weight"}) {
    const Mat& w = lm.io_params().at(name);
    INFO(name);
    CHECK(std::sqrt(w.squaredNorm() / double(w.size())) == Approx(kHfInitializerRange).epsilon(test::kInitMomentTol));
  }
  // without RoPE the learned positions stay, and torch's init keeps nn.Embedding's N(0, 1)
  ModelConfig learned = tiny("pre");
  learned.d_model = 32;
  LanguageModel plain(learned, 64, 64, false);
  init.scheme = "torch";
  plain.initialize(init);
  const Mat& P = plain.io_params().at("pos_embedding.weight");
  CHECK(std::sqrt(P.squaredNorm() / double(P.size())) == Approx(1.0).epsilon(test::kInitMomentTol));
}
