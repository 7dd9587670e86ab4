// test_coord_check.cpp — the coordinate check (train/coord_check.hpp, train/coord_stats.hpp): the statistics against
// the forward pass by hand (the logits it records are the ones the softmax saw), and the verdicts the mup README's
// figure shows: under Adam, SP's activations and logits grow with width and μP's do not; over depth, Pre-LN's
// stream grows under SP and stays flat under depth-μP and CompleteP.
#include <catch2/catch.hpp>

#include <cmath>

#include "derivative_checks.hpp"
#include "gradflow/model/sublayer.hpp"
#include "gradflow/train/coord_check.hpp"
#include "gradflow/train/lm.hpp"
#include "tolerances.hpp"

using namespace gradflow;
using Json = nlohmann::ordered_json;

namespace {

TrainConfig model(const std::string& placement, Index d, Index L) {
  TrainConfig c;
  c.model.placement = placement;
  c.model.layers = L;
  c.model.d_model = d;
  c.model.heads = 2;
  c.task.name = "copy";
  c.task.vocab = 16;
  c.task.seq_len = 8;
  c.batch = 4;
  c.lr = 1e-2;
  c.warmup = 0;
  c.schedule = "constant";
  c.steps = 5;
  c.init.seed = 1;
  return c;
}

Parametrization param(ParametrizationKind k) {
  Parametrization p;
  p.kind = k;
  return p;  // bases unset: coord-check fills them in (the smallest size)
}

Json summary(const Json& report) { return report["axes"][0]["summary"]; }

const std::vector<std::string> kActivations = {"stream", "attn_branch", "ffn_branch", "attn_logits", "output_logits"};

}  // namespace

TEST_CASE("coord stats: the means of the forward pass, and logits whose softmax is the saved P", "[train][quick]") {
  ModelConfig cfg = model("pre", 8, 2).model;
  cfg.causal = true;
  LanguageModel lm(cfg, 16, 8, false);
  lm.initialize(InitConfig{});
  Sequence s;
  for (int i = 0; i < 9; ++i) s.tokens.push_back((3 * i) % 16);
  s.targets.assign(8, 1);
  LmGrads g = lm.make_grads();
  SeqProbe probe;
  probe.want_coords = true;
  Trace t;
  lm.forward_backward(s, 1.0, g, &probe, &t);
  const CoordStats& c = probe.coords;
  REQUIRE(c.stream.size() == 2);
  for (size_t l = 0; l < 2; ++l) {
    CHECK(std::abs(c.stream[l].mean() - t.x[l + 1].cwiseAbs().mean()) < test::kClosedFormChainTol);
    CHECK(std::abs(c.attn_branch[l].mean() - t.blocks[l].units[0].b.cwiseAbs().mean()) < test::kClosedFormChainTol);
    // the logits: softmax over the kept pairs of each recorded row gives the cache's P; |S| summed by hand
    const auto& ac = std::get<AttentionBranchCache>(t.blocks[l].units[0].g).attn;
    const double scale = cfg.logit_scale();
    double sum = 0, count = 0;
    for (Index h = 0; h < 2; ++h) {
      const Mat S = scale * ac.qkv.middleCols(h * 4, 4) * ac.qkv.middleCols(8 + h * 4, 4).transpose();
      for (Index r = 0; r < 8; ++r) {
        const RowVec row = S.row(r).head(r + 1);
        const RowVec p = (row.array() - row.maxCoeff()).exp().matrix();
        CHECK(test::rel_err(Mat(p / p.sum()), Mat(ac.P[static_cast<size_t>(h)].row(r).head(r + 1))) < test::kAlgebraTol);
        sum += row.cwiseAbs().sum();
        count += static_cast<double>(r + 1);
      }
    }
    CHECK(std::abs(c.attn_logits[l].mean() - sum / count) < test::kClosedFormChainTol);
  }
  CHECK(std::abs(c.output_logits.mean() - lm.logits(t.y).cwiseAbs().mean()) < test::kClosedFormChainTol);
}

TEST_CASE("coord check: least-squares slope", "[train][quick]") {
  CHECK(std::abs(ls_slope({4, 5, 6, 7}, {1.0, 1.5, 2.0, 2.5}) - 0.5) < test::kClosedFormTol);
  CHECK(std::isnan(ls_slope({4}, {1.0})));
  CHECK(std::isnan(ls_slope({4, 4}, {1.0, 2.0})));
}

TEST_CASE("coord check: over width, SP grows under Adam and muP does not", "[train][quick]") {
  CoordCheckConfig c;
  c.base = model("pre", 16, 2);
  c.widths = {16, 32, 64, 128};
  c.seeds = 2;
  const Json sp = summary(coord_check(c));
  for (const auto& q : {"stream", "attn_logits", "output_logits"}) {
    INFO("sp " << q << " " << sp[q].dump());
    CHECK(sp[q]["verdict"] == "grows");
  }
  c.base.model.param = param(ParametrizationKind::Mup);
  const Json report = coord_check(c);
  CHECK(report["config"]["parametrization"]["base_width"] == 16);
  const Json mup = summary(report);
  for (const auto& q : kActivations) {
    INFO("mup " << q << " " << mup[q].dump());
    CHECK(mup[q]["verdict"] == "stable or shrinks");
  }
}

TEST_CASE("coord check: over depth, Pre-LN's stream grows under SP, not under depth-muP or CompleteP", "[train][quick]") {
  CoordCheckConfig c;
  c.base = model("pre", 32, 2);
  c.depths = {2, 4, 8, 16};
  c.seeds = 2;
  CHECK(summary(coord_check(c))["stream"]["verdict"] == "grows");
  for (ParametrizationKind k : {ParametrizationKind::DepthMup, ParametrizationKind::CompleteP}) {
    c.base.model.param = param(k);
    const Json s = summary(coord_check(c));
    INFO(to_string(k) << " " << s.dump());
    for (const auto& q : kActivations)
      if (std::string(q).find("branch") == std::string::npos) CHECK(s[q]["verdict"] == "stable or shrinks");
  }
}

TEST_CASE("coord check: bad sizes refused by name", "[train][quick]") {
  CoordCheckConfig c;
  c.base = model("pre", 16, 2);
  CHECK_THROWS_WITH(resolve_coord_check(c), Catch::Contains("--widths or --depths"));
  c.widths = {32};
  CHECK_THROWS_WITH(resolve_coord_check(c), Catch::Contains("at least two"));
  c.widths = {32, 32};
  CHECK_THROWS_WITH(resolve_coord_check(c), Catch::Contains("twice"));
  c.widths = {16, 24};
  c.base.model.d_ff = 36;  // 36·24/16 = 54: whole; 36·18/16 is not
  CHECK_NOTHROW(resolve_coord_check(c));
  c.widths = {16, 18};
  CHECK_THROWS_WITH(resolve_coord_check(c), Catch::Contains("--d-ff"));
}
