// test_block_weights.cpp — weights held per block (model/block_weights.hpp): each block's matrices drawn when a pass
// reaches it are initialize()'s values bit for bit, for every placement and init scheme; a matrix that is not held
// cannot be read.
#include <catch2/catch.hpp>

#include <string>

#include "gradflow/core/error.hpp"
#include "gradflow/model/block_weights.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/model/placement.hpp"
#include "small_model.hpp"

namespace gradflow {
namespace {

// The deferred model's parameters against the resident one's, block by block through the hook.
void check_same_as_resident(const ModelConfig& cfg, const InitConfig& init) {
  Model resident(cfg);
  initialize(resident, init);
  Model lazy(cfg, cpu_kernels(), WeightResidency::PerBlock);
  initialize(lazy, init);
  const BlockWeights weights(lazy, init);
  ParamStore& p = lazy.params();
  const ParamStore& r = resident.params();
  REQUIRE(p.numel() == r.numel());  // counted from the shapes, held or not
  Index deferred = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const Param& q = p.all()[i];
    INFO(q.name);
    CHECK(q.held == !is_weight_matrix(q.role));
    if (q.held) {
      CHECK(p[static_cast<int>(i)] == r[static_cast<int>(i)]);
    } else {
      ++deferred;
      CHECK(q.value.size() == 0);  // no memory until its block is reached
      CHECK_THROWS_AS(p[static_cast<int>(i)], Error);
    }
  }
  CHECK(deferred >= 4 * cfg.layers);  // in_proj, out_proj, linear1, linear2 of every block (and linear3 when gated)
  for (Index l = cfg.layers - 1; l >= 0; --l) {  // in the backward pass's order: any order gives the same values
    weights.hook()(l, false);
    for (size_t i = 0; i < p.size(); ++i) {
      if (lazy.block_of_param(static_cast<int>(i)) != l) continue;
      INFO(p.all()[i].name);
      REQUIRE(p.all()[i].held);
      CHECK(p[static_cast<int>(i)] == r[static_cast<int>(i)]);
    }
    weights.hook()(l, true);
    for (size_t i = 0; i < p.size(); ++i)
      if (lazy.block_of_param(static_cast<int>(i)) == l && is_weight_matrix(p.all()[i].role))
        CHECK((!p.all()[i].held && p.all()[i].value.size() == 0));
  }
}

}  // namespace

TEST_CASE("block weights: drawn per block, every placement and init scheme, equal initialize()'s bit for bit",
          "[model]") {
  for (const char* scheme : {"torch", "xavier", "xavier-normal", "gpt2", "t-fixup", "hf-normal"}) {
    for (const auto& pl : placements()) {
      INFO(scheme << " " << pl->name());
      InitConfig init;
      init.scheme = scheme;
      init.seed = 11;
      init.scale = 0.5;  // --init-scale multiplies out_proj and linear2 after the scheme and the placement
      check_same_as_resident(test::small_model(pl->name(), 3), init);
    }
  }
}

TEST_CASE("block weights: the decoder blocks' matrices (gated, grouped heads) drawn per block equal initialize()'s",
          "[model]") {
  ModelConfig cfg = test::small_model("pre", 2);
  cfg.ffn = FeedForwardKind::SwiGLU;
  cfg.heads = 4;
  cfg.kv_heads = 2;
  cfg.bias = false;
  cfg.rope = true;
  for (const char* scheme : {"torch", "gpt2", "t-fixup", "hf-normal"}) {
    INFO(scheme);
    InitConfig init;
    init.scheme = scheme;
    init.seed = 4;
    check_same_as_resident(cfg, init);
  }
}

TEST_CASE("block weights: a model held per block keeps no weight matrix outside a pass", "[model]") {
  Model lazy(test::small_model("post", 2), cpu_kernels(), WeightResidency::PerBlock);
  InitConfig init;
  initialize(lazy, init);
  const Mat x0 = random_normal(1, "input", 4, 8);
  CHECK_THROWS_AS(lazy.forward(x0), Error);  // a pass without the hook reads a matrix that is not held: refused
  const BlockWeights weights(lazy, init);
  Model resident(test::small_model("post", 2));
  initialize(resident, init);
  const Trace t = lazy.forward(x0, &weights.hook());
  CHECK(t.y == resident.forward(x0).y);
  for (const Param& q : lazy.params().all()) CHECK(q.held == !is_weight_matrix(q.role));
}

}  // namespace gradflow
