// test_layer_quantities.cpp — issue 15's per-layer quantities in the analyze report: present in every mode and
// every placement, the same in every mode (they come from the one forward/backward pass), the unit inputs the
// branch ratios use rebuild the forward pass bit for bit, and the q/k/v split adds up to in_proj_weight's norm.
// (Their values against PyTorch: tests/pytorch/test_layer_quantities_torch.py; the formulas: tests/linalg.)
#include <catch2/catch.hpp>

#include <cmath>

#include "gradflow/model/init.hpp"
#include "gradflow/model/placement.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/run/analysis.hpp"
#include "gradflow/run/analyze.hpp"
#include "gradflow/run/context.hpp"
#include "tolerances.hpp"

using namespace gradflow;
using namespace gradflow::test;
namespace f = gradflow::fields;

namespace {
RunConfig small(const std::string& placement, bool causal = false) {
  RunConfig rc;
  rc.model.placement = placement;
  rc.model.layers = 3;
  rc.model.d_model = 8;
  rc.model.heads = 2;
  rc.model.causal = causal;
  rc.analysis.seq_len = 4;
  rc.analysis.progress = false;
  rc.init.seed = 5;
  return rc;
}
}  // namespace

TEST_CASE("layer quantities: Model::unit_inputs rebuilds every block's output bit for bit, every placement",
          "[analysis]") {
  for (const auto& p : placements()) {
    INFO(p->name());
    RunConfig rc = small(p->name());
    Model model(rc.model);
    initialize(model, rc.init);
    const Trace t = model.forward(random_normal(1, "input", 4, 8));
    for (Index l = 0; l < model.layers(); ++l) {
      const std::vector<Mat> in = model.unit_inputs(t, l);
      REQUIRE(in.size() == model.block(l).size() + 1);
      CHECK(in.front() == t.x[static_cast<size_t>(l)]);
      CHECK(in.back() == t.x[static_cast<size_t>(l) + 1]);
    }
  }
}

TEST_CASE("layer quantities: every placement and mode reports them, the same in every mode", "[analysis]") {
  const std::vector<EngineRequest> modes = {EngineRequest::Explicit, EngineRequest::MatrixFree,
                                            EngineRequest::GradientsOnly, EngineRequest::Streamed};
  for (const auto& p : placements()) {
    for (bool causal : {false, true}) {
      INFO(p->name() << (causal ? " causal" : ""));
      std::vector<Json> reports;
      for (EngineRequest m : modes) {
        RunConfig rc = small(p->name(), causal);
        rc.analysis.engine_request = m;
        reports.push_back(analyze(rc));
      }
      const Json& r = reports.front();
      REQUIRE(r[f::kOutputTokenGeometry][f::kStableRank].is_number());
      for (const Json& layer : r[f::kLayers]) {
        const Json& g = layer[f::kTokenGeometry];
        CHECK(g[f::kMeanCosine].get<double>() <= 1.0 + kAlgebraTol);
        CHECK(g[f::kRankOneDistance].get<double>() >= 0.0);
        CHECK(g[f::kStableRank].get<double>() >= 1.0 - kAlgebraTol);
        const Json& a = layer[f::kAttention];
        CHECK(a[f::kEntropy].get<double>() <= a[f::kMaxEntropy].get<double>() + kAlgebraTol);
        CHECK(a[f::kHeads].size() == 2);
        const double expected_max = causal ? std::log(24.0) / 4 : std::log(4.0);  // mean of ln(i+1) = ln(4!)/4
        CHECK_THAT(a[f::kMaxEntropy].get<double>(), Catch::Matchers::WithinAbs(expected_max, kAlgebraTol));
        CHECK(layer[f::kBranchRatio].contains(f::kAttention));
        CHECK(layer[f::kBranchRatio].contains(f::kFeedForward));
        CHECK(layer[f::kAttentionGradNorms][f::kOut].is_number());
        // null only when all four gradients vanish (ReZero's gate starts at 0: no branch gets a gradient)
        if (layer[f::kQkGradShare].is_null()) {
          CHECK(layer[f::kAttentionGradNorms][f::kOut].get<double>() == 0.0);
          CHECK(layer[f::kAttentionGradNorms][f::kQuery].get<double>() == 0.0);
        } else {
          const double share = layer[f::kQkGradShare].get<double>();
          CHECK((share >= 0.0 && share <= 1.0));
        }
      }
      for (size_t m = 1; m < reports.size(); ++m) {
        INFO("mode " << to_string(modes[m]));
        for (size_t l = 0; l < r[f::kLayers].size(); ++l)
          for (const char* k : {f::kTokenGeometry, f::kAttention, f::kBranchRatio, f::kAttentionGradNorms,
                                f::kQkGradShare})
            CHECK(reports[m][f::kLayers][l][k] == r[f::kLayers][l][k]);
        CHECK(reports[m][f::kOutputTokenGeometry] == r[f::kOutputTokenGeometry]);
      }
    }
  }
}

TEST_CASE("layer quantities: the q/k/v gradient norms add up to in_proj_weight's, kept or streamed", "[analysis]") {
  for (const char* p : {"post", "pre", "sub-ln", "normformer"}) {
    INFO(p);
    RunConfig rc = small(p);
    Model model(rc.model);
    initialize(model, rc.init);
    const Mat x0 = random_normal(1, "input", 4, 8);
    AnalysisOptions kept = rc.analysis, streamed = rc.analysis;
    kept.keep_param_grads = true;
    streamed.keep_param_grads = false;
    const std::shared_ptr<const Backend> cpu = make_backend(BackendKind::Cpu);
    const AnalysisContext a(model, x0, kept, cpu, nullptr, 3), b(model, x0, streamed, cpu, nullptr, 3);
    CHECK(a.in_proj_part_norms == b.in_proj_part_norms);
    Index found = 0;
    for (size_t i = 0; i < model.params().size(); ++i) {
      const auto& parts = a.in_proj_part_norms[i];
      if (model.params().all()[i].role != ParamRole::InProjWeight) {
        CHECK(parts.empty());
        continue;
      }
      ++found;
      REQUIRE(parts.size() == 3);
      const Mat& g = a.grads[static_cast<int>(i)];
      for (Index k = 0; k < 3; ++k) CHECK(parts[static_cast<size_t>(k)] == Approx(g.middleRows(k * 8, 8).norm()).epsilon(kCrossTol));
      const double total = std::sqrt(parts[0] * parts[0] + parts[1] * parts[1] + parts[2] * parts[2]);
      CHECK(total == Approx(a.param_grad_norms[i]).epsilon(kCrossTol));
    }
    CHECK(found == model.layers());
  }
}

TEST_CASE("output sensitivity: off by default, first order agrees with the finite difference, deterministic",
          "[analysis]") {
  CHECK_FALSE(analyze(small("post")).contains(f::kOutputSensitivity));
  // (not rezero: its gates start at 0, so relative perturbations leave y = x_0 unchanged, exactly)
  for (const char* p : {"post", "pre", "admin", "sandwich", "normformer"}) {
    INFO(p);
    RunConfig rc = small(p);
    rc.analysis.engine_request = EngineRequest::GradientsOnly;
    rc.analysis.sensitivity_probes = 4;
    rc.analysis.sensitivity_size = 1e-4;
    const Json r = analyze(rc), again = analyze(rc);
    const Json& s = r[f::kOutputSensitivity];
    CHECK(s == again[f::kOutputSensitivity]);
    CHECK(r[f::kConfig][f::kSensitivityProbes] == 4);
    const double first = s[f::kFirstOrder].get<double>(), fd = s[f::kFiniteDifference].get<double>();
    REQUIRE(first > 0);
    CHECK(std::abs(fd / first - 1.0) <= kSecondOrderTol);
    CHECK(s[f::kFirstOrderStderr].get<double>() > 0);
    // quadratic in r: halving r quarters the first-order change (same probes ξ)
    rc.analysis.sensitivity_size = 0.5e-4;
    CHECK(analyze(rc)[f::kOutputSensitivity][f::kFirstOrder].get<double>() == Approx(first / 4).epsilon(kCrossTol));
  }
}
