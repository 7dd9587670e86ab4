// test_train_precision.cpp — mixed-precision training (train --precision; src/train/train.cpp, lm.cpp, optim.cpp):
// the model cast to the type stores only values of the type (embeddings, logits, dL/dz, dL/dy, every gradient), its
// loss and gradients sit near float64's by about the type's unit roundoff, the master weights and Adam's moments are
// float32 values, runs are identical at 1 and 2 threads, a dynamic loss scale skips the step that overflows and
// backs off as GradScaler, a fixed one that overflows is a divergence, and the exact run's report is unchanged.
#include <catch2/catch.hpp>

#include <cmath>

#include "gradflow/core/error.hpp"
#include "gradflow/kernels/precision_kernels.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/train/lm.hpp"
#include "gradflow/train/optim.hpp"
#include "gradflow/train/train.hpp"
#include "train_fixtures.hpp"

using namespace gradflow;
using Json = nlohmann::ordered_json;

namespace {

TrainConfig small(const std::string& placement, long steps, Precision p) {
  TrainConfig c = test::small_training(placement, steps);
  c.precision = p;
  return c;
}
using test::without_timing;

bool all_representable(Precision p, const Mat& m) {
  for (Index i = 0; i < m.size(); ++i)
    if (!representable(p, m.data()[i])) return false;
  return true;
}

// ‖a − b‖ / ‖b‖
double rel(const Mat& a, const Mat& b) { return (a - b).norm() / b.norm(); }

// a small causal language model in float64, initialized, and its task
struct ExactLm {
  TrainConfig c = small("post", 0, Precision::F64);
  ModelConfig m = causal(c.model);
  Task task{c.task, 3};
  LanguageModel exact{m, c.task.vocab, c.task.seq_len, false};
  ExactLm() { exact.initialize(c.init); }
  static ModelConfig causal(ModelConfig m) {
    m.causal = true;
    return m;
  }
};

}  // namespace

TEST_CASE("train precision: the cast language model stores values of the type, near float64's", "[train][quick]") {
  const ExactLm f;
  const TrainConfig& c = f.c;
  const ModelConfig& m = f.m;
  const LanguageModel& exact = f.exact;
  const Sequence seq = f.task.sample(3, "check", 0);
  LmGrads ge = exact.make_grads();
  Trace te;
  Mat dye;
  const SeqLoss le = exact.forward_backward(seq, 0.25, ge, nullptr, &te, &dye);
  for (Precision p : {Precision::F32, Precision::BF16, Precision::F16}) {
    INFO(to_string(p));
    const auto kernels = make_precision_kernels(p, exact.body().kernels());
    LanguageModel cast(m, c.task.vocab, c.task.seq_len, false, *kernels, p);
    cast.copy_params_rounded(exact);
    for (const auto& q : cast.io_params().all()) CHECK(all_representable(p, q.value));
    LmGrads g = cast.make_grads();
    Trace t;
    Mat dy;
    const SeqLoss l = cast.forward_backward(seq, 0.25, g, nullptr, &t, &dy);
    CHECK(all_representable(p, cast.embed(seq.tokens)));
    CHECK(all_representable(p, cast.logits(t.y)));
    CHECK(all_representable(p, t.y));
    CHECK(all_representable(p, dy));
    for (size_t i = 0; i < g.body.size(); ++i) CHECK(all_representable(p, g.body[static_cast<int>(i)]));
    for (size_t i = 0; i < g.io.size(); ++i) CHECK(all_representable(p, g.io[static_cast<int>(i)]));
    // not a tolerance of correctness: rounding errors near each type's unit roundoff (2^-24, 2^-8, 2^-11),
    // orders of magnitude apart (tests/pytorch compares the passes against PyTorch's)
    const double loss_err = std::abs(l.loss_sum - le.loss_sum) / le.loss_sum;
    const double dy_err = rel(dy, dye), head_err = rel(g.io[2], ge.io[2]), tok_err = rel(g.io[0], ge.io[0]);
    INFO("loss " << loss_err << ", dL/dy " << dy_err << ", lm_head " << head_err << ", tok_embedding " << tok_err);
    const double bound = p == Precision::F32 ? 1e-5 : 0.2;
    CHECK(loss_err < bound);
    CHECK(dy_err < bound);
    CHECK(head_err < bound);
    CHECK(tok_err < bound);
    if (p != Precision::F32) CHECK(dy_err > 1e-4);
  }
}

TEST_CASE("train precision: Adam with float32 storage keeps float32 values, one rounding from the exact step",
          "[train][quick]") {
  Mat p0(3, 4), g(3, 4);
  for (Index i = 0; i < p0.size(); ++i) {
    p0.data()[i] = round_to(Precision::F32, 0.1 * std::sin(1.0 + i));
    g.data()[i] = round_to(Precision::F32, 1e-3 * std::cos(2.0 + i));
  }
  Mat pe = p0, pf = p0;
  AdamOptions o;
  o.weight_decay = 0.01;
  Adam exact({&pe}, o);
  o.storage = Precision::F32;
  Adam single({&pf}, o);
  for (int t = 0; t < 3; ++t) {
    exact.step({&g}, 1e-3);
    single.step({&g}, 1e-3);
  }
  CHECK(all_representable(Precision::F32, pf));
  CHECK_FALSE(all_representable(Precision::F32, pe));
  // each stored value rounded to float32: within a few float32 ulps of the exact update
  for (Index i = 0; i < pf.size(); ++i) CHECK(std::abs(pf.data()[i] - pe.data()[i]) <= 4 * std::ldexp(std::abs(pe.data()[i]), -24));
}

TEST_CASE("train precision: f32 and bf16 runs report their regime, train near the exact run, same at 1 and 2 threads",
          "[train][quick]") {
  const Json exact = train(small("pre", 10, Precision::F64));
  CHECK_FALSE(exact["config"].contains("precision"));
  CHECK_FALSE(exact["final"].contains("loss_scale"));
  CHECK_FALSE(exact["log"][0].contains("loss_scale"));
  for (Precision p : {Precision::F32, Precision::BF16}) {
    INFO(to_string(p));
    TrainConfig c = small("pre", 10, p);
    c.threads = 1;
    const Json a = train(c);
    CHECK(a["config"]["precision"]["type"] == to_string(p));
    CHECK(a["config"]["precision"]["loss_scale"] == 1.0);
    CHECK(a["log"][0]["loss_scale"] == 1.0);
    CHECK_FALSE(a["log"][0].contains("skipped"));
    CHECK(a["final"]["updates"] == 10);
    CHECK(a["diverged"].is_null());
    for (size_t k = 0; k < a["log"].size(); ++k) {
      const double x = a["log"][k]["train_loss"].get<double>(), y = exact["log"][k]["train_loss"].get<double>();
      INFO("step " << a["log"][k]["step"] << ": " << x << " vs " << y);
      CHECK(std::abs(x - y) / y < (p == Precision::F32 ? 1e-5 : 0.05));
    }
    c.threads = 2;
    CHECK(without_timing(train(c)).dump() == without_timing(a).dump());
  }
}

TEST_CASE("train precision: a dynamic loss scale skips the step that overflows float16 and backs off", "[train][quick]") {
  // one target per batch (recall, batch 1): dL/dz at the target is S·(p_t − 1) with p_t ≈ 1/V; at V = 8192 and
  // S = 2^16 that is ≈ −65528, past float16's largest finite value 65504 (it rounds to −Inf), so step 0 is skipped;
  // at 2^15 it fits (the head's gradient dzᵀ·y may still overflow later: then that step is skipped too)
  TrainConfig c;
  c.model.placement = "pre";
  c.model.layers = 1;
  c.model.d_model = 8;
  c.model.heads = 2;
  c.task.name = "recall";
  c.task.vocab = 8192;
  c.task.seq_len = 4;
  c.steps = 4;
  c.batch = 1;
  c.log_every = 1;
  c.eval_size = 2;
  c.init.seed = 1;
  c.precision = Precision::F16;
  c.loss_scale = LossScale{true, 1.0};
  const Json r = train(c);
  INFO(r["log"].dump());
  REQUIRE(r["diverged"].is_null());
  CHECK(r["log"][0]["loss_scale"] == 65536.0);
  CHECK(r["log"][0]["skipped"] == true);
  CHECK(r["log"][0]["layers"][0]["grad_norm"].is_null());
  CHECK_FALSE(r["log"][0].contains("update_ratios"));
  CHECK(r["log"][1]["loss_scale"] == 32768.0);
  CHECK(r["log"][1]["skipped"] == false);
  CHECK(r["log"][1]["update_ratios"].contains("layers.0"));
  // every later step as GradScaler moves it: halved after a skipped step, else kept (2000 clean steps are far)
  long skipped = 0;
  for (size_t k = 0; k < r["log"].size(); ++k) {
    const Json& e = r["log"][k];
    INFO("step " << k);
    CHECK(e["loss_scale"].get<double>() == std::ldexp(65536.0, -static_cast<int>(skipped)));
    if (k + 1 < r["log"].size()) skipped += e["skipped"].get<bool>();
  }
  CHECK(r["final"]["skipped_steps"] == skipped);
  CHECK(r["final"]["loss_scale"].get<double>() == std::ldexp(65536.0, -static_cast<int>(skipped)));
  CHECK(r["final"]["updates"] == 4 - skipped);
  CHECK(skipped < 4);
  // the same scale held fixed is the run's divergence at step 0, in the gradient
  c.loss_scale = LossScale{false, 65536.0};
  const Json f = train(c);
  REQUIRE_FALSE(f["diverged"].is_null());
  CHECK(f["diverged"]["step"] == 0);
  CHECK(f["diverged"]["quantity"] == "gradient");
}

TEST_CASE("train precision: --loss-scale without --precision is refused with the fix", "[train][quick]") {
  TrainConfig c = small("post", 2, Precision::F64);
  c.loss_scale = LossScale{true, 1.0};
  REQUIRE_THROWS_WITH(validate_train(c), Catch::Contains("--loss-scale") && Catch::Contains("fix: add --precision"));
}

TEST_CASE("train precision: under autocast the language model's stream is float32, its products of the type",
          "[train][quick]") {
  ExactLm f;
  const TrainConfig& c = f.c;
  const ModelConfig& m = f.m;
  LanguageModel& exact = f.exact;
  exact.round_params(Precision::F32);  // the master weights
  const Sequence seq = f.task.sample(3, "check", 0);
  for (Precision p : {Precision::BF16, Precision::F16}) {
    INFO(to_string(p));
    const ModelKernels k = make_autocast_kernels(p, exact.body().kernels());
    LanguageModel step(m, c.task.vocab, c.task.seq_len, false, *k.main, p, k.branch.get());
    step.copy_params_rounded(exact);
    for (size_t i = 0; i < step.io_params().all().size(); ++i)  // float32 master weights, unchanged by the copy
      CHECK(step.io_params().all()[i].value == exact.io_params().all()[i].value);
    LmGrads g = step.make_grads();
    Trace t;
    Mat dy;
    step.forward_backward(seq, 0.25, g, nullptr, &t, &dy);
    const Mat x0 = step.embed(seq.tokens);
    // x_0, the stream and y: float32, most values not of the type
    for (const Mat* v : std::initializer_list<const Mat*>{&x0, &t.x.back(), &t.y}) {
      CHECK(all_representable(Precision::F32, *v));
      CHECK_FALSE(all_representable(p, *v));
    }
    // the logits are a linear's output, dL/dy its input gradient (y's cast, undone in float32 exactly); the head's
    // and every block weight's gradient a product's: of the type
    CHECK(all_representable(p, step.logits(t.y)));
    CHECK(all_representable(p, dy));
    CHECK(all_representable(p, g.io[2]));
    const auto& params = step.body().params().all();
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i].name.find("weight") != std::string::npos && params[i].name.find("norm") == std::string::npos) {
        INFO(params[i].name);
        CHECK(all_representable(p, g.body[static_cast<int>(i)]));
      }
    // the embeddings' gradients are the stream's: float32
    CHECK(all_representable(Precision::F32, g.io[0]));
    CHECK_FALSE(all_representable(p, g.io[0]));
  }
  // the run reports the regime, and trains as near the exact run as the cast model
  TrainConfig a = small("pre", 10, Precision::BF16);
  a.autocast = true;
  const Json r = train(a);
  CHECK(r["config"]["precision"]["regime"].get<std::string>().rfind("autocast", 0) == 0);
  CHECK(r["final"]["updates"] == 10);
  const Json exact_run = train(small("pre", 10, Precision::F64));
  for (size_t s = 0; s < r["log"].size(); ++s) {
    const double x = r["log"][s]["train_loss"].get<double>(), y = exact_run["log"][s]["train_loss"].get<double>();
    CHECK(std::abs(x - y) / y < 0.05);
  }
}
