// test_placements_derivatives.cpp — a finite-difference check of the derivatives each newer recipe adds (block
// Jacobian, JVP, VJP and its own parameters' gradients). The full derivative matrix over every placement × norm
// lives in test_model_derivatives.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "placement_fixtures.hpp"

using namespace gradflow;
using namespace gradflow::test;
using namespace gradflow::test::by_hand;

// Finite differences on the derivatives the new recipes add: the block Jacobian (B2T's extra path, Sub-LN's inner
// norm, NormFormer's head scale and d_ff norm, learnable skips) and the gradients of their new parameters.
TEST_CASE("new recipes: block Jacobian, JVP, VJP and new-parameter gradients vs finite differences",
          "[placements][derivatives]") {
  const double h = kFdStep;
  for (const std::string placement :
       {"admin", "b2t", "normformer", "sub-ln", "nonorm", "lns", "reorder", "hybridnorm", "hybridnorm-star",
        "resi-dual"})
    for (NormKind norm : {NormKind::LayerNorm, NormKind::RMSNorm, NormKind::DyT}) {
      ModelConfig c = small_config(placement, 2);
      c.norm = norm;
      c.residual_scale = 0.8;
      Model m(c);
      initialize(m, init_config("xavier"));
      const Mat x0 = input(c);
      profile_initialization(m, x0);
      if (placement == "normformer") {  // gains away from 1
        m.params().at("layers.1.c_attn") << 0.7, 1.3;
        m.params().at("layers.1.w_resid").array() += 0.1;
      }
      if (placement.rfind("hybridnorm", 0) == 0)  // the Q/K/V norms' gains off 1, biases off 0, DyT's α off 0.5
        for (auto& prm : m.params().all())
          if (prm.name.find("_norm.") != std::string::npos)
            prm.value += 0.2 * random_normal(kSeed, prm.name, prm.value.rows(), prm.value.cols());
      INFO(placement << " / " << to_string(norm));
      const Trace t = m.forward(x0);
      const Index w = m.state_width(), N = kTokens * w;  // resi-dual: the pair [x_a | x_d], w = 2d
      for (Index l = 0; l < m.layers(); ++l) {
        const BlockCache& bc = t.blocks[static_cast<size_t>(l)];
        const Mat& x = t.x[static_cast<size_t>(l)];
        const Mat J = m.block_jacobian(l, bc).to_dense();
        Mat Jfd(N, N);
        for (Index k = 0; k < N; ++k) {
          Mat xp = x, xm = x;
          xp(k / w, k % w) += h;
          xm(k / w, k % w) -= h;
          BlockCache cp, cm;
          const Mat diff = (m.block_forward(l, xp, cp) - m.block_forward(l, xm, cm)) / (2 * h);
          Jfd.col(k) = Eigen::Map<const Eigen::VectorXd>(Mat(diff).data(), N);  // row-major flattening
        }
        INFO("block " << l);
        CHECK(rel_err(J, Jfd) < kFdTol);
        const Mat v = random_normal(kSeed, "v", kTokens, w), u = random_normal(kSeed, "u", kTokens, w);
        const Mat Jv = m.block_jvp(l, bc, v);
        const Eigen::VectorXd Jv_dense = J * Eigen::Map<const Eigen::VectorXd>(v.data(), N);
        CHECK((Eigen::Map<const Eigen::VectorXd>(Jv.data(), N) - Jv_dense).norm() <= kCrossTol * Jv_dense.norm());
        const Mat uJ = m.block_vjp(l, bc, u, nullptr);
        const Eigen::VectorXd uJ_dense = J.transpose() * Eigen::Map<const Eigen::VectorXd>(u.data(), N);
        CHECK((Eigen::Map<const Eigen::VectorXd>(uJ.data(), N) - uJ_dense).norm() <= kCrossTol * uJ_dense.norm());
      }
      // gradients of the recipe's own parameters, L = Σ g ⊙ y
      const Mat g = random_normal(kSeed, "cotangent", kTokens, c.d_model);
      ParamGrads grads(m.params());
      m.backward(t, g, &grads);
      auto loss = [&] { return m.forward(x0).y.cwiseProduct(g).sum(); };
      int checked = 0;
      for (size_t i = 0; i < m.params().size(); ++i) {
        Param& prm = m.params().all()[i];
        const std::string& nm = prm.name;
        bool extra = false;
        for (const char* key :
             {"omega", "c_attn", "w_resid", "ffn_layernorm", "inner_attn_ln", "attn_ln", "q_norm", "k_norm", "v_norm"})
          extra = extra || nm.find(key) != std::string::npos;
        if (!extra) continue;
        Mat fd(prm.value.rows(), prm.value.cols());
        // four-point at kFdStepSmooth (the model is GELU): central differences erred up to 3.4e-7 here, this 3.6e-9
        for (Index k = 0; k < prm.value.size(); ++k) {
          const double keep = prm.value.data()[k];
          fd.data()[k] = fd_diff<double>(
              [&](double s) {
                prm.value.data()[k] = keep + s;
                const double l = loss();
                prm.value.data()[k] = keep;
                return l;
              },
              Stencil::FourPoint, kFdStepSmooth);
        }
        INFO("parameter " << nm);
        if (nm.find("k_norm.bias") != std::string::npos) {
          // exactly 0: β_k adds q_i·β_k/√e to every score of query i alike, which the softmax cancels
          CHECK(grads[static_cast<int>(i)].norm() <= kZeroGradTol);
          CHECK(fd.norm() <= kFdZeroTol);  // central differences of a constant: rounding only
        } else {
          CHECK(rel_err(grads[static_cast<int>(i)], fd) < kFdTol);
        }
        ++checked;
      }
      if (placement != "b2t" && placement != "nonorm" && placement != "lns" && placement != "reorder" &&
          placement != "resi-dual")
        CHECK(checked > 0);
    }
}
