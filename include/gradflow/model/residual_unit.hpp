// residual_unit.hpp — one residual sublayer, the unit every placement is a recipe over:
//   u = PreNorm(x);  b = BranchNorm(G(u));  z = s ⊙ x + c·b;  y = PostNorm(z)
// each norm optional; s the skip coefficient (1; DeepNorm's α; Admin's ω per feature), c = λ·a with λ the
// residual scale (--residual-scale) and a ReZero's learnable gate (1 when absent).
//   Post-LN: PostNorm only.  Pre-LN: PreNorm only.  Sandwich: PreNorm + BranchNorm.  ReZero: gate, no norm.
// Its Jacobian: J = J_post · (diag(s) + c · J_branch · J_G · J_pre).
#pragma once
#include <optional>
#include <string>

#include "gradflow/model/sublayer.hpp"
#include "gradflow/ops/norm.hpp"

namespace gradflow {

struct UnitSpec {
  SublayerKind kind = SublayerKind::Attention;
  std::string pre_norm;     // parameter prefix of the norm before G ("" = none), e.g. "norm1"
  std::string branch_norm;  // norm after G, inside the residual branch ("" = none), e.g. "norm3"
  std::string post_norm;    // norm after the residual sum ("" = none), e.g. "norm1"
  double skip_scale = 1.0;  // s (scalar form)
  double branch_scale = 1.0;  // λ
  bool gate = false;          // ReZero: multiply the branch by the learnable scalar "resweight"
};

struct UnitCache {
  NormCache pre, branch, post;
  SublayerCache g;
  Mat b;  // (n, d) branch output after BranchNorm, before c
};

struct ResidualUnit {
  UnitSpec spec;
  Sublayer G;
  std::optional<NormLayer> pre, branch, post;
  int gate = -1;  // index of the ReZero scalar, when spec.gate
  RowVec skip;    // (d) per-feature skip coefficient (Admin's ω); empty => spec.skip_scale

  double branch_coefficient(const ParamStore& p) const;  // c = λ·a
  Mat forward(const ParamStore& p, const Mat& x, UnitCache& c) const;
  Mat vjp(const ParamStore& p, const UnitCache& c, const Mat& dy, ParamGrads* g) const;
  Mat jvp(const ParamStore& p, const UnitCache& c, const Mat& dx) const;
  Jacobian jacobian(const ParamStore& p, const UnitCache& c) const;

 private:
  Mat apply_skip(const Mat& x) const;  // s ⊙ x (stacked copies allowed)
};

}  // namespace gradflow
