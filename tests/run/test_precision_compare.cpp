// test_precision_compare.cpp — `--precision` (run/precision_compare.hpp): a constructed model whose gradient halves
// exactly at every block, so the layer where float16's gradient becomes subnormal and then 0 is known in advance; the
// loss scale that brings it back; the dynamic scale; f64 reports unchanged; the refusals.
#include <catch2/catch.hpp>

#include <cmath>

#include "gradflow/backend/backend.hpp"
#include "gradflow/core/rng.hpp"
#include "gradflow/model/model.hpp"
#include "gradflow/kernels/cpu_kernels.hpp"
#include "gradflow/kernels/precision_kernels.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/run/analysis.hpp"
#include "gradflow/run/analyze.hpp"
#include "gradflow/run/engine.hpp"
#include "gradflow/run/memory_estimate.hpp"
#include "gradflow/run/precision_compare.hpp"
#include "resolved_options.hpp"

using namespace gradflow;
using Json = nlohmann::ordered_json;

namespace {

constexpr Index kLayers = 30, kTokens = 3, kWidth = 4;

// NormFormer without its final norm, every parameter 0 but the feed-forward unit's skip vector w_resid = 1/2: each
// branch is constant (zero weights), so block l's Jacobian is diag(1/2) and with the cotangent all ones
// dL/dx_l = 2^-(L-l) exactly, in float64 and (as long as it is a float16 value) in float16. Below float16's smallest
// subnormal 2^-24 it is 0: round(2^-24 / 2) ties to even.
Json halving_report(Precision p, LossScale scale) {
  ModelConfig cfg;
  cfg.placement = "normformer";
  cfg.layers = kLayers;
  cfg.d_model = kWidth;
  cfg.heads = 2;
  cfg.d_ff = 8;
  cfg.final_norm = false;
  cfg.validate();
  Model model(cfg);
  for (auto& prm : model.params().all())
    if (prm.name.find("w_resid") != std::string::npos) prm.value.setConstant(0.5);
  AnalysisOptions opts;
  opts.engine = Engine::GradientsOnly;
  opts.keep_param_grads = true;
  opts.precision = p;
  opts.loss_scale = scale;
  const Mat x0 = random_normal(1, "input", kTokens, kWidth), g = Mat::Ones(kTokens, kWidth);
  const AnalysisContext ctx(model, x0, opts, make_backend(BackendKind::Cpu), &g, 1);
  Json body = run_analyses(ctx);
  add_precision_comparison(ctx, InitConfig{}, false, x0, nullptr, body);
  return body;
}

LossScale fixed(double s) {
  LossScale l;
  l.value = s;
  return l;
}

}  // namespace

TEST_CASE("precision: float16 gradients turn subnormal, then 0, at the layers the halving predicts", "[precision]") {
  const Json r = halving_report(Precision::F16, fixed(1));
  for (Index l = 0; l < kLayers; ++l) {
    const Index halvings = kLayers - l;  // dL/dx_l = 2^-halvings
    const Json& layer = r["layers"][static_cast<size_t>(l)];
    const Json& p = layer["precision"];
    INFO("layer " << l << ": float64 ||dL/dx_l|| = " << layer["grad_norm"].get<double>());
    CHECK(layer["grad_norm"].get<double>() == std::ldexp(std::sqrt(double(kTokens * kWidth)), -int(halvings)));
    if (halvings <= 24) {  // a float16 value: exact
      CHECK(p["grad_rel_error"].get<double>() == 0.0);
      CHECK(p["underflow_fraction"].get<double>() == 0.0);
      CHECK(p["zero_fraction"].get<double>() == 0.0);
      CHECK(p["subnormal_fraction"].get<double>() == (halvings > 14 ? 1.0 : 0.0));
      CHECK(p["max_abs_grad"].get<double>() == std::ldexp(1.0, -int(halvings)));
    } else {  // 0 in float16
      CHECK(p["underflow_fraction"].get<double>() == 1.0);
      CHECK(p["zero_fraction"].get<double>() == 1.0);
      CHECK(p["grad_rel_error"].get<double>() == 1.0);
      CHECK(p["grad_norm"].get<double>() == 0.0);
    }
  }
  CHECK(r["precision"]["summary"]["underflow_layers"].size() == kLayers - 24);
  CHECK(r["precision"]["type"] == "f16");
}

TEST_CASE("precision: a loss scale brings float16's underflowed gradients back, and bfloat16 never lost them",
          "[precision]") {
  // 2^10: dL/dx_l·S = 2^(10-(L-l)) >= 2^-20 for every l: all float16 values again, and exact after dividing by S
  const Json r = halving_report(Precision::F16, fixed(1024));
  CHECK(r["precision"]["summary"]["underflow_layers"].empty());
  for (const auto& layer : r["layers"]) CHECK(layer["precision"]["grad_rel_error"].get<double>() == 0.0);
  CHECK(r["precision"]["loss_scale"].get<double>() == 1024.0);
  // bfloat16 has float32's range: 2^-30 is a normal value
  const Json b = halving_report(Precision::BF16, fixed(1));
  CHECK(b["precision"]["summary"]["underflow_layers"].empty());
  for (const auto& layer : b["layers"]) CHECK(layer["precision"]["subnormal_fraction"].get<double>() == 0.0);
}

TEST_CASE("precision: the dynamic loss scale is the largest power of two without overflow", "[precision]") {
  LossScale dynamic;
  dynamic.dynamic = true;
  const Json r = halving_report(Precision::F16, dynamic);
  const double s = r["precision"]["loss_scale"].get<double>();
  int e = 0;
  CHECK(std::frexp(s, &e) == 0.5);  // a power of two
  CHECK_FALSE(r["precision"]["summary"]["overflow"].get<bool>());
  // the cotangent alone is 1·S, which float16 holds up to 2^15; twice the scale overflows somewhere
  CHECK(s <= std::ldexp(1.0, 15));
  const Json twice = halving_report(Precision::F16, fixed(2 * s));
  CHECK(twice["precision"]["summary"]["overflow"].get<bool>());
  CHECK_FALSE(halving_report(Precision::F16, fixed(s))["precision"]["summary"]["overflow"].get<bool>());
}

TEST_CASE("precision: f32 and bf16 gradients of a random Pre-LN model are close to float64's, bf16 further",
          "[precision]") {
  // not a tolerance of correctness (tests/pytorch compares against PyTorch's float32 and bfloat16): the errors
  // are rounding, so they sit near each type's unit roundoff (2^-24, 2^-8), orders of magnitude apart
  RunConfig rc = test::resolved({{"placement", "pre"}, {"layers", "4"}, {"d-model", "16"}, {"heads", "2"},
                                 {"seq-len", "8"}, {"precision", "f32"}});
  rc.analysis.progress = false;
  const Json f32 = analyze(rc);
  rc.analysis.precision = Precision::BF16;
  const Json bf16 = analyze(rc);
  CHECK(f32["config"]["precision"] == "f32");
  CHECK(f32["config"]["mode"] == "gradients-only");
  for (size_t l = 0; l < 4; ++l) {
    const double e32 = f32["layers"][l]["precision"]["grad_rel_error"].get<double>();
    const double e16 = bf16["layers"][l]["precision"]["grad_rel_error"].get<double>();
    INFO("layer " << l << ": f32 " << e32 << ", bf16 " << e16);
    CHECK(e32 > 0);
    CHECK(e32 < 1e-5);
    CHECK(e16 > 1e-4);
    CHECK(e16 < 0.2);
    // the float64 fields are the float64 run's
    CHECK(f32["layers"][l]["grad_norm"] == bf16["layers"][l]["grad_norm"]);
  }
}

TEST_CASE("precision: f64 reports are today's, and the options are refused where they mean nothing",
          "[precision]") {
  RunConfig rc = test::resolved({{"placement", "post"}, {"layers", "2"}, {"d-model", "8"}, {"heads", "2"},
                                 {"seq-len", "4"}});
  rc.analysis.progress = false;
  rc.analysis.engine_request = EngineRequest::GradientsOnly;
  Json plain = analyze(rc);
  rc.analysis.precision = Precision::F64;  // as given by --precision f64
  Json given = analyze(rc);
  CHECK_FALSE(plain.contains("precision"));
  CHECK_FALSE(plain["config"].contains("precision"));
  for (Json* j : {&plain, &given}) {
    j->erase("elapsed_seconds");
    j->erase("timing_seconds");
  }
  CHECK(plain == given);

  rc.analysis.engine_request = EngineRequest::Explicit;
  rc.analysis.precision = Precision::BF16;
  CHECK_THROWS_WITH(choose_engine(rc.model, rc.analysis, RunBackend(rc.analysis.backend)),
                    Catch::Contains("--precision bf16 measures the gradients only") && Catch::Contains("fix:"));
  rc.analysis.engine_request = EngineRequest::Auto;
  rc.analysis.precision = Precision::F64;
  rc.analysis.loss_scale = fixed(8);
  CHECK_THROWS_WITH(choose_engine(rc.model, rc.analysis, RunBackend(rc.analysis.backend)),
                    Catch::Contains("--loss-scale") && Catch::Contains("fix: add --precision"));
}

TEST_CASE("precision: a float16 forward pass that overflows is refused naming the layer", "[precision]") {
  RunConfig rc = test::resolved({{"placement", "pre"}, {"layers", "3"}, {"d-model", "8"}, {"heads", "2"},
                                 {"seq-len", "4"}, {"precision", "f16"}, {"residual-scale", "1e5"}});
  rc.analysis.progress = false;
  CHECK_THROWS_WITH(analyze(rc), Catch::Contains("--precision f16 the forward pass overflows") &&
                                     Catch::Contains("fix: use --precision bf16"));
}

TEST_CASE("precision: every state and gradient a low-precision pass stores is a value of the type, in every block",
          "[precision]") {
  // the classic encoder blocks and a decoder block (RMSNorm, SwiGLU, rotary positions, grouped-query heads, QK-norm):
  // x_l, y and every dL/dx_l come out of the kernels, so each is rounded, whatever ops ran between them
  const std::vector<std::vector<std::pair<std::string, std::string>>> configs = {
      {{"placement", "post"}},
      {{"placement", "sandwich"}, {"activation", "gelu"}},
      {{"arch", "qwen3"}, {"kv-heads", "1"}, {"head-dim", "4"}},
  };
  for (const auto& extra : configs) {
    std::vector<std::pair<std::string, std::string>> o = {{"layers", "3"}, {"d-model", "16"}, {"heads", "2"},
                                                          {"seq-len", "5"}};
    o.insert(o.end(), extra.begin(), extra.end());
    const RunConfig rc = test::resolved(o);
    for (const Precision p : {Precision::F32, Precision::BF16, Precision::F16}) {
      INFO(extra.front().second << " at " << to_string(p));
      const auto kernels = make_precision_kernels(p, cpu_kernels());
      Model model(rc.model, *kernels);
      initialize(model, rc.init);
      for (auto& prm : model.params().all()) round_in_place(p, prm.value);
      Mat x = random_normal(3, "input", 5, 16), g = random_normal(4, "cotangent", 5, 16);
      round_in_place(p, x);
      round_in_place(p, g);
      const Trace t = model.forward(x);
      std::vector<Mat> dx;
      model.backward(t, g, nullptr, &dx);
      bool all = true;
      for (Index i = 0; i < t.y.size(); ++i) all = all && representable(p, t.y.data()[i]);
      const std::vector<Mat>& grads = dx;
      for (const std::vector<Mat>* v : {&t.x, &grads})
        for (const Mat& m : *v)
          for (Index i = 0; i < m.size(); ++i) all = all && representable(p, m.data()[i]);
      CHECK(all);
    }
  }
}

TEST_CASE("precision: the memory guard counts the kept float64 gradients and the second model", "[precision]") {
  // a budget the gradients-only run fits in and the comparison does not: refused before any work, naming the parts
  RunConfig rc = test::resolved({{"placement", "post"}, {"layers", "8"}, {"d-model", "128"}, {"heads", "4"},
                                 {"seq-len", "8"}});
  rc.analysis.engine_request = EngineRequest::GradientsOnly;
  const MemoryEstimate plain = streaming_memory(rc.model, 8, 0, true);
  MemoryEstimate with = plain;
  add_precision_memory(with, rc.model, 8, true);
  REQUIRE(with.total() > 1.5 * plain.total());
  rc.analysis.max_memory_bytes = 0.5 * (plain.total() + with.total());
  CHECK_NOTHROW(choose_engine(rc.model, rc.analysis, RunBackend(rc.analysis.backend)));
  rc.analysis.precision = Precision::BF16;
  CHECK_THROWS_WITH(choose_engine(rc.model, rc.analysis, RunBackend(rc.analysis.backend)),
                    Catch::Contains("float64 parameter gradients kept for the comparison") &&
                        Catch::Contains("fix:"));
}
