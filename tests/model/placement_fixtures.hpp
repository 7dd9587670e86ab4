// placement_fixtures.hpp — what the tests/model/test_placements_*.cpp files share: the small GELU model, its
// input and init, and the hand-written forwards (LayerNorm with unit gains, multi-head attention, HybridNorm's
// per-head Q/K/V-normed attention, the FFN) the recipes are checked against. Relative errors are
// derivative_checks.hpp's rel_err.
#pragma once
#include <cmath>
#include <string>

#include "derivative_checks.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/model/placement.hpp"
#include "gradflow/ops/activation.hpp"
#include "gradflow/ops/attention.hpp"
#include "gradflow/ops/linear.hpp"
#include "small_model.hpp"
#include "tolerances.hpp"

namespace gradflow::test::by_hand {

inline constexpr Index kTokens = 4;
inline constexpr uint64_t kSeed = 7;

// smooth (GELU) for finite differences
inline ModelConfig small_config(const std::string& placement, Index layers = 3) {
  return small_model(placement, layers, Activation::Gelu);
}

inline InitConfig init_config(const std::string& scheme = "xavier") {
  InitConfig i;
  i.scheme = scheme;
  i.seed = kSeed;
  return i;
}

inline Mat input(const ModelConfig& c) { return random_normal(kSeed, "input", kTokens, c.d_model); }

inline double variance(const Mat& m) { return (m.array() - m.mean()).square().mean(); }

// LayerNorm with γ = 1, β = 0 written out (the gains are 1 at initialization).
inline Mat layernorm(const Mat& x, double eps = 1e-5) {
  Mat y(x.rows(), x.cols());
  for (Index i = 0; i < x.rows(); ++i) {
    const RowVec xc = x.row(i).array() - x.row(i).mean();
    y.row(i) = xc / std::sqrt(xc.squaredNorm() / static_cast<double>(x.cols()) + eps);
  }
  return y;
}

// Multi-head attention before out_proj, written out: heads concatenated (n, d).
inline Mat attention_heads(const ParamStore& p, const std::string& pre, const Mat& x, Index heads) {
  const Index d = x.cols(), e = d / heads;
  const Mat qkv = (x * p.at(pre + "self_attn.in_proj_weight").transpose()).rowwise() +
                  p.at(pre + "self_attn.in_proj_bias").row(0);
  Mat O(x.rows(), d);
  for (Index h = 0; h < heads; ++h) {
    Mat S = qkv.middleCols(h * e, e) * qkv.middleCols(d + h * e, e).transpose() / std::sqrt(double(e));
    for (Index i = 0; i < S.rows(); ++i) {
      S.row(i) = (S.row(i).array() - S.row(i).maxCoeff()).exp();
      S.row(i) /= S.row(i).sum();
    }
    O.middleCols(h * e, e) = S * qkv.middleCols(2 * d + h * e, e);
  }
  return O;
}

// HybridNorm's attention before out_proj, written out: Q, K, V each LayerNorm-ed per head (γ = 1, β = 0).
inline Mat attention_heads_qkv_norm(const ParamStore& p, const std::string& pre, const Mat& x, Index heads) {
  const Index d = x.cols(), e = d / heads;
  const Mat qkv = (x * p.at(pre + "self_attn.in_proj_weight").transpose()).rowwise() +
                  p.at(pre + "self_attn.in_proj_bias").row(0);
  Mat O(x.rows(), d);
  for (Index h = 0; h < heads; ++h) {
    const Mat Q = layernorm(qkv.middleCols(h * e, e)), K = layernorm(qkv.middleCols(d + h * e, e));
    const Mat V = layernorm(qkv.middleCols(2 * d + h * e, e));
    Mat S = Q * K.transpose() / std::sqrt(double(e));
    for (Index i = 0; i < S.rows(); ++i) {
      S.row(i) = (S.row(i).array() - S.row(i).maxCoeff()).exp();
      S.row(i) /= S.row(i).sum();
    }
    O.middleCols(h * e, e) = S * V;
  }
  return O;
}

inline Mat linear(const ParamStore& p, const std::string& name, const Mat& x) {
  return (x * p.at(name + ".weight").transpose()).rowwise() + p.at(name + ".bias").row(0);
}

inline Mat ffn(const ParamStore& p, const std::string& pre, const Mat& x, bool mid_norm) {
  Mat a = ops::activation_forward(Activation::Gelu, linear(p, pre + "linear1", x));
  if (mid_norm) a = layernorm(a);
  return linear(p, pre + "linear2", a);
}

// A constant the placement's entry reports (placement.hpp: constants), e.g. "deepnorm_alpha".
inline double reported_constant(const ModelConfig& c, const std::string& key) {
  nlohmann::ordered_json j;
  find_placement(c.placement).constants(c, j);
  return j.at(key).get<double>();
}

}  // namespace gradflow::test::by_hand
