// test_autocast.cpp — `--autocast bf16|f16` (docs/math.md §16 "Autocast"): which tensors are float32 and which are of
// the low type, checked value by value on every block family (a value of a type is one that rounding to it keeps);
// the report's regime; the refusals. The numbers against PyTorch's own autocast: tests/pytorch/test_precision_torch.py.
#include <catch2/catch.hpp>

#include "gradflow/core/rng.hpp"
#include "gradflow/kernels/cpu_kernels.hpp"
#include "gradflow/kernels/precision_kernels.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/model/model.hpp"
#include "gradflow/run/analyze.hpp"
#include "resolved_options.hpp"

using namespace gradflow;
using Json = nlohmann::ordered_json;

namespace {

// the share of m's values that are values of p
double share_of(Precision p, const Mat& m) {
  Index in = 0;
  for (Index i = 0; i < m.size(); ++i) in += representable(p, m.data()[i]);
  return static_cast<double>(in) / static_cast<double>(m.size());
}

using Options = std::vector<std::pair<std::string, std::string>>;

}  // namespace

TEST_CASE("autocast: the stream and its cotangents are float32, the matrix products' weight gradients of the type",
          "[precision][autocast]") {
  // every block family whose casts differ: Post-LN (norm after the add), Pre-LN, Peri-LN (a branch norm reads G's
  // low-precision output), NormFormer (mid and inner norms read low-precision tensors; float32 head gains),
  // ReZero (a float32 gate times b), a residual scale (a number times b, in the low type), a decoder block (RMSNorm, SwiGLU,
  // RoPE, GQA, QK-norm)
  const std::vector<Options> configs = {
      {{"placement", "post"}},
      {{"placement", "pre"}, {"activation", "gelu"}},
      {{"placement", "sandwich"}},
      {{"placement", "normformer"}},
      {{"placement", "rezero"}},
      {{"placement", "pre"}, {"residual-scale", "0.5"}},
      {{"arch", "qwen3"}, {"kv-heads", "1"}, {"head-dim", "4"}},
  };
  for (const auto& extra : configs) {
    Options o = {{"layers", "3"}, {"d-model", "16"}, {"heads", "2"}, {"seq-len", "5"}};
    o.insert(o.end(), extra.begin(), extra.end());
    const RunConfig rc = test::resolved(o);
    for (const Precision p : {Precision::BF16, Precision::F16}) {
      INFO(extra.front().second << (extra.size() > 1 ? " " + extra.back().second : "") << " at " << to_string(p));
      const ModelKernels k = make_autocast_kernels(p, cpu_kernels());
      Model model(rc.model, *k.main, WeightResidency::Resident, k.branch.get());
      initialize(model, rc.init);
      for (auto& prm : model.params().all()) round_in_place(Precision::F32, prm.value);  // master weights
      for (auto& prm : model.params().all())
        if (prm.name.find("resweight") != std::string::npos) prm.value.setConstant(0.375);  // ReZero's α ≠ 0
      Mat x = random_normal(3, "input", 5, 16), g = random_normal(4, "cotangent", 5, 16);
      round_in_place(Precision::F32, x);
      round_in_place(Precision::F32, g);
      const Trace t = model.forward(x);
      ParamGrads grads(model.params());
      std::vector<Mat> dx;
      model.backward(t, g, &grads, &dx);
      // the stream, its cotangents and the output: float32 values, most of them not of the low type
      const std::vector<Mat>& cotangents = dx;
      for (const std::vector<Mat>* v : {&t.x, &cotangents})
        for (size_t l = 1; l < v->size(); ++l) {
          CHECK(share_of(Precision::F32, (*v)[l]) == 1.0);
          CHECK(share_of(p, (*v)[l]) < 0.5);
        }
      CHECK(share_of(Precision::F32, t.y) == 1.0);
      // a matrix product's weight gradient is its output: of the low type; a norm's gain gradient a float32 sum
      // (most of its values not of the low type)
      const auto& params = model.params().all();
      for (size_t i = 0; i < params.size(); ++i) {
        const Mat& gi = grads[static_cast<int>(i)];
        INFO(params[i].name);  // (the report rounds each .grad to float32 when complete: precision_compare.cpp)
        if (params[i].name.find("proj_weight") != std::string::npos ||
            params[i].name.find("linear1.weight") != std::string::npos ||
            params[i].name.find("out_proj.weight") != std::string::npos)
          CHECK(share_of(p, gi) == 1.0);
        if (params[i].name.find("norm") != std::string::npos && params[i].name.find(".weight") != std::string::npos &&
            gi.size() > 4)
          CHECK(share_of(p, gi) < 0.5);
      }
    }
  }
}

TEST_CASE("autocast: the report names its regime, its numbers differ from the cast model's, f64 fields unchanged",
          "[precision][autocast]") {
  RunConfig rc = test::resolved({{"placement", "pre"}, {"layers", "3"}, {"d-model", "16"}, {"heads", "2"},
                                 {"seq-len", "6"}, {"autocast", "f16"}});
  rc.analysis.progress = false;
  const Json ac = analyze(rc);
  rc.analysis.autocast = false;
  const Json cast = analyze(rc);
  CHECK(ac["config"]["precision"] == "f16");
  CHECK(ac["config"]["precision_regime"] == "autocast");
  CHECK_FALSE(cast["config"].contains("precision_regime"));
  CHECK(ac["precision"]["regime"] == "autocast");
  CHECK(cast["precision"]["regime"] == "cast");
  // the final norm's bias gradient is Σ_r dL/dy(r, ·), which depends on the cotangent alone (--loss dot): under
  // autocast a float32 sum of the float32 cotangent (error at float32's unit roundoff, 2^-24), in the cast model a
  // float16 one (2^-11)
  const double ac_bias = ac["precision"]["head_param_grad_rel_errors"]["norm.bias"].get<double>();
  const double cast_bias = cast["precision"]["head_param_grad_rel_errors"]["norm.bias"].get<double>();
  INFO("norm.bias: autocast " << ac_bias << ", cast " << cast_bias);
  CHECK(ac_bias < 1e-6);
  CHECK(cast_bias > 1e-5);
  for (size_t l = 0; l < 3; ++l) CHECK(ac["layers"][l]["grad_norm"] == cast["layers"][l]["grad_norm"]);
}

TEST_CASE("autocast: refused with --precision, for a type with no low precision, and where --precision is",
          "[precision][autocast]") {
  CHECK_THROWS_WITH(test::resolved({{"precision", "bf16"}, {"autocast", "bf16"}}),
                    Catch::Contains("--precision and --autocast") && Catch::Contains("fix:"));
  CHECK_THROWS_WITH(test::resolved({{"autocast", "bf16"}, {"precision", "f16"}}),
                    Catch::Contains("--precision and --autocast") && Catch::Contains("fix:"));
  CHECK_THROWS_WITH(test::resolved({{"autocast", "f32"}}), Catch::Contains("--autocast f32") && Catch::Contains("fix:"));
  CHECK_THROWS_WITH(test::resolved({{"autocast", "f8"}}), Catch::Contains("--autocast") && Catch::Contains("fix:"));
  CHECK_THROWS_WITH(make_autocast_kernels(Precision::F32, cpu_kernels()), Catch::Contains("fix:"));
}
