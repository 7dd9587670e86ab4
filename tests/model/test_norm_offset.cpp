// test_norm_offset.cpp — --norm-offset (Gemma's RMSNorm, γ = 1 + w with w stored): a model with weights w and the
// offset is the same function, with the same derivatives, as the plain model with weights 1 + w; ∂L/∂w = ∂L/∂γ.
// Exact equality: both compute with the same γ (1 + w rounded once) through the same code.
#include <catch2/catch.hpp>

#include "gradflow/core/params.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/model/model.hpp"
#include "small_model.hpp"

using namespace gradflow;

TEST_CASE("norm offset: weights w with the offset are the plain model with weights 1 + w", "[model]") {
  for (const NormKind norm : {NormKind::RMSNorm, NormKind::LayerNorm, NormKind::DyT}) {
    for (const char* placement : {"sandwich", "pre", "post"}) {
      INFO(to_string(norm) << " " << placement);
      ModelConfig plain_cfg = test::small_model(placement, 2, Activation::GeluTanh);
      plain_cfg.norm = norm;
      plain_cfg.qk_norm = QkNorm::Head;
      ModelConfig offset_cfg = plain_cfg;
      offset_cfg.norm_offset = true;
      Model plain(plain_cfg), offset(offset_cfg);
      InitConfig init;
      init.seed = 11;
      initialize(plain, init);
      initialize(offset, init);
      auto& po = offset.params().all();
      auto& pp = plain.params().all();
      REQUIRE(po.size() == pp.size());
      int norms = 0;
      for (size_t i = 0; i < po.size(); ++i) {
        REQUIRE(po[i].name == pp[i].name);
        if (po[i].role != ParamRole::NormWeight) {
          CHECK(po[i].value == pp[i].value);
          continue;
        }
        ++norms;
        CHECK(po[i].value.isZero(0.0));  // γ = 1 + 0 at init
        CHECK(pp[i].value.isOnes(0.0));
        // away from init: w ~ N(0, 0.3²), γ = 1 + w
        po[i].value = 0.3 * random_normal(11 + i, "w", po[i].value.rows(), po[i].value.cols());
        pp[i].value = (po[i].value.array() + 1.0).matrix();
      }
      CHECK(norms > 0);
      const Mat x0 = random_normal(3, "input", 4, plain_cfg.d_model);
      const Trace tp = plain.forward(x0), to = offset.forward(x0);
      CHECK(to.y == tp.y);
      for (Index l = 0; l < plain.layers(); ++l)
        CHECK(offset.block_jacobian(l, to.blocks[static_cast<size_t>(l)]).to_dense() ==
              plain.block_jacobian(l, tp.blocks[static_cast<size_t>(l)]).to_dense());
      const Mat g = random_normal(4, "cotangent", 4, plain_cfg.d_model);
      ParamGrads gp(plain.params()), go(offset.params());
      CHECK(offset.backward(to, g, &go) == plain.backward(tp, g, &gp));
      for (size_t i = 0; i < po.size(); ++i) {
        INFO(po[i].name);
        CHECK(go[static_cast<int>(i)] == gp[static_cast<int>(i)]);
      }
      // and the offset matters: the offset model with the plain model's weights (γ = 2 + w) is another function
      Model shifted(offset_cfg);
      for (size_t i = 0; i < po.size(); ++i) shifted.params().all()[i].value = pp[i].value;
      CHECK(shifted.forward(x0).y != tp.y);
    }
  }
}
