// test_rope_heads.cpp — the decoder blocks' attention pieces (issue 32): RoPE (ops/rope.hpp) against its rotation in
// closed form, its Jacobian, JVP and VJP; the generalized heads (grouped-query, any head width, logit scale,
// soft-cap) against finite differences, J·v vs JVP and uᵀJ vs VJP (stacked copies too), and reducing to the classic
// heads bit for bit.
#include <cmath>

#include "derivative_checks.hpp"
#include "gradflow/ops/attention.hpp"
#include "gradflow/ops/rope.hpp"

using namespace gradflow;
using namespace gradflow::test;

namespace {
// The dense Jacobian of a linear map from its JVP on every unit vector (the heads have no closed form here).
Mat jacobian_by_jvp(const MapFn& jvp, Index rows, Index cols, Index out_size) {
  Mat J(out_size, rows * cols);
  for (Index k = 0; k < rows * cols; ++k) {
    Mat e = Mat::Zero(rows, cols);
    e(k / cols, k % cols) = 1.0;
    J.col(k) = flat(jvp(e));
  }
  return J;
}
}  // namespace

TEST_CASE("rope: the rotate-half rotation, its inverse, Jacobian and derivatives", "[ops][rope]") {
  const Index n = 5, h = 2, K = 1, e = 6;
  for (const Index r : {Index{6}, Index{4}}) {  // whole heads; a partial rotary (Pythia), features 4, 5 untouched
    const ops::RopeTables t = ops::rope_tables(n, h, K, e, r, 10000.0);
    const Mat x = random_mat(n, (h + 2 * K) * e, 301);
    const Mat y = ops::rope_forward(t, x);
    // closed form at position 3, query head 1, pair (1, 1 + r/2): θ_1 = 10000^(−2/r)
    const double th = std::pow(10000.0, -2.0 / static_cast<double>(r)), a = 3.0 * th;
    const Index base = 1 * e, i = 1, j = i + r / 2;
    CHECK(y(3, base + i) == Approx(x(3, base + i) * std::cos(a) - x(3, base + j) * std::sin(a)).epsilon(kClosedFormTol));
    CHECK(y(3, base + j) == Approx(x(3, base + j) * std::cos(a) + x(3, base + i) * std::sin(a)).epsilon(kClosedFormTol));
    // position 0 is the identity; V and the features past r pass through; each token's norm is kept
    CHECK(y.row(0) == x.row(0));
    CHECK(y.rightCols(K * e) == x.rightCols(K * e));
    if (r < e) CHECK(y.col(e - 1) == x.col(e - 1));
    for (Index p = 0; p < n; ++p) CHECK(std::abs(y.row(p).norm() - x.row(p).norm()) <= kCrossTol * x.row(p).norm());
    // the inverse undoes it; derivatives: the map is linear, its VJP the transpose
    CHECK(rel_err(ops::rope_forward(t, y, true), x) <= kCrossTol);
    check_map(
        "rope r=" + std::to_string(r), [&](const Mat& v) { return ops::rope_forward(t, v); },
        [&](const Mat& v) { return ops::rope_jvp(t, v); }, [&](const Mat& u) { return ops::rope_vjp(t, u); },
        [&] { return ops::rope_jacobian(t).to_dense(); }, x);
  }
  CHECK(ops::rotary_dim_of(64, 0.25) == 16);  // Pythia: int(head_dim * rotary_pct)
}

TEST_CASE("attention heads: grouped-query, head width, scale and soft-cap vs finite differences", "[ops][attention]") {
  struct Case { Index n, h, K, e; double scale, cap; bool causal; };
  for (const Case cs : {Case{4, 4, 2, 3, 0.5, 0.0, false}, Case{5, 4, 1, 2, 0.8, 0.0, true},
                        Case{4, 2, 2, 3, 1.0 / std::sqrt(3.0), 1.5, false}, Case{3, 6, 3, 2, 0.9, 2.0, true},
                        Case{1, 2, 1, 4, 0.7, 1.0, false}}) {
    ops::HeadsSpec s;
    s.heads = cs.h;
    s.kv_heads = cs.K;
    s.head_dim = cs.e;
    s.scale = cs.scale;
    s.softcap = cs.cap;
    s.causal = cs.causal;
    const Mat qkv = random_mat(cs.n, s.qkv_width(), 310 + static_cast<uint64_t>(cs.h), 1.5);
    ops::AttentionCache c;
    c.x = Mat::Zero(cs.n, 1);  // the heads read n from it
    c.qkv = qkv;
    ops::attention_heads_forward(s, c);
    const auto forward = [&](const Mat& v) {
      ops::AttentionCache cc;
      cc.x = c.x;
      cc.qkv = v;
      ops::attention_heads_forward(s, cc);
      return cc.O;
    };
    const MapFn jvp = [&](const Mat& v) { return ops::attention_heads_jvp(s, c, v); };
    const MapFn vjp = [&](const Mat& u) { return ops::attention_heads_vjp(s, c, u); };
    check_map("heads n=" + std::to_string(cs.n) + " h=" + std::to_string(cs.h) + " K=" + std::to_string(cs.K) +
                  " e=" + std::to_string(cs.e) + " cap=" + std::to_string(cs.cap) + (cs.causal ? " causal" : ""),
              forward, jvp, vjp, [&] { return jacobian_by_jvp(jvp, cs.n, s.qkv_width(), cs.n * s.q_width()); }, qkv);
    if (cs.cap > 0) {  // the capped logits stay inside (−C, C): P is the softmax of C·tanh(S/C)
      const Mat Q = qkv.leftCols(cs.e), Kh = qkv.middleCols(s.q_width(), cs.e);
      Mat T = (cs.scale * Q * Kh.transpose()).unaryExpr([&](double v) { return cs.cap * std::tanh(v / cs.cap); });
      Mat P = T;
      for (Index i = 0; i < cs.n; ++i) {
        const Index len = cs.causal ? i + 1 : cs.n;
        const double m = T.row(i).head(len).maxCoeff();
        double z = 0;
        for (Index j = 0; j < cs.n; ++j) z += (P(i, j) = j < len ? std::exp(T(i, j) - m) : 0.0);
        P.row(i) /= z;
      }
      CHECK(rel_err(c.P[0], P) <= kCrossTol);
    }
  }
}

TEST_CASE("attention heads: the classic spec is nn.MultiheadAttention's, bit for bit", "[ops][attention]") {
  // HeadsSpec::classic(h, d) is what every classic model uses; grouped with K = h and scale 1/√e it is the same
  const Index n = 6, d = 8, h = 2;
  const ops::HeadsSpec s = ops::HeadsSpec::classic(h, d, true);
  CHECK(s.is_classic(d));
  CHECK(s.head_dim == 4);
  CHECK(s.scale == 0.5);
  ops::HeadsSpec other = s;
  other.scale = 0.4;
  CHECK(!other.is_classic(d));
  other = s;
  other.kv_heads = 1;
  CHECK(!other.is_classic(d));
  other = s;
  other.softcap = 30;
  CHECK(!other.is_classic(d));
  // a soft-cap far above the logits changes them by O(S³/C²) only
  const Mat qkv = random_mat(n, 3 * d, 320, 0.3);
  ops::AttentionCache a, b;
  a.x = b.x = Mat::Zero(n, 1);
  a.qkv = b.qkv = qkv;
  ops::attention_heads_forward(s, a);
  other.softcap = 1e6;
  ops::attention_heads_forward(other, b);
  CHECK(rel_err(a.O, b.O) <= kCrossTol);
}
