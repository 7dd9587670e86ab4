// test_attention.cpp — multi-head self-attention: explicit Jacobian vs finite differences, jvp/vjp vs J,
// parameter gradients vs finite differences, for several head counts, causal or not, n = 1.
#include "derivative_checks.hpp"
#include "gradflow/ops/attention.hpp"

#include <omp.h>

using namespace gradflow;
using namespace gradflow::test;

namespace {
struct AttnFixture {
  Mat in_w, in_b, out_w, out_b;
  AttnFixture(Index d) {
    in_w = random_mat(3 * d, d, 71, 0.6);
    in_b = random_mat(1, 3 * d, 72, 0.3);
    out_w = random_mat(d, d, 73, 0.5);
    out_b = random_mat(1, d, 74, 0.3);
  }
  ops::AttentionWeights w(Index heads, bool causal) const {
    return {in_w, &in_b, out_w, &out_b, ops::HeadsSpec::classic(heads, in_w.cols(), causal)};
  }
};
}  // namespace

TEST_CASE("attention: derivatives", "[ops][attention]") {
  struct Case { Index n, d, h; bool causal; };
  for (const Case cs : {Case{4, 6, 1, false}, Case{4, 6, 2, false}, Case{5, 6, 3, true}, Case{1, 4, 2, false},
                        Case{3, 4, 4, true}}) {
    AttnFixture f(cs.d);
    const auto w = f.w(cs.h, cs.causal);
    const Mat x = random_mat(cs.n, cs.d, 80 + static_cast<uint64_t>(cs.n));
    ops::AttentionCache c;
    ops::attention_forward(w, x, c);
    check_map(
        "attention n=" + std::to_string(cs.n) + " d=" + std::to_string(cs.d) + " h=" + std::to_string(cs.h) +
            (cs.causal ? " causal" : ""),
        [&](const Mat& v) { ops::AttentionCache cc; return ops::attention_forward(w, v, cc); },
        [&](const Mat& v) { return ops::attention_jvp(w, c, v); },
        [&](const Mat& u) { return ops::attention_vjp(w, c, u, {}); },
        [&] { return ops::attention_jacobian(w, c).to_dense(); }, x);
  }
}

TEST_CASE("attention: causal mask makes the Jacobian block lower triangular", "[ops][attention]") {
  AttnFixture f(4);
  const auto w = f.w(2, true);
  const Mat x = random_mat(4, 4, 90);
  ops::AttentionCache c;
  ops::attention_forward(w, x, c);
  const Mat J = ops::attention_jacobian(w, c).to_dense();
  for (Index i = 0; i < 4; ++i)
    for (Index j = i + 1; j < 4; ++j) CHECK(J.block(i * 4, j * 4, 4, 4).norm() == 0.0);
}

TEST_CASE("attention: parameter gradients vs finite differences", "[ops][attention]") {
  for (bool causal : {false, true}) {
    AttnFixture f(6);
    const Mat x = random_mat(4, 6, 91), g = random_mat(4, 6, 92);
    ops::AttentionCache c;
    ops::attention_forward(f.w(2, causal), x, c);
    Mat d_in_w = Mat::Zero(18, 6), d_in_b = Mat::Zero(1, 18), d_out_w = Mat::Zero(6, 6), d_out_b = Mat::Zero(1, 6);
    ops::attention_vjp(f.w(2, causal), c, g, {&d_in_w, &d_in_b, &d_out_w, &d_out_b});
    Mat* params[] = {&f.in_w, &f.in_b, &f.out_w, &f.out_b};
    const Mat* grads[] = {&d_in_w, &d_in_b, &d_out_w, &d_out_b};
    for (int k = 0; k < 4; ++k) {
      Mat& P = *params[k];
      const Mat saved = P;
      const Mat fd = unflat(fd_jacobian([&](const Mat& v) {
                               P = v;
                               ops::AttentionCache cc;
                               const double L = g.cwiseProduct(ops::attention_forward(f.w(2, causal), x, cc)).sum();
                               P = saved;
                               return Mat::Constant(1, 1, L);
                             }, saved).row(0), saved.rows(), saved.cols());
      INFO("parameter " << k << (causal ? " causal" : ""));
      CHECK(rel_err(*grads[k], fd) <= kFdTol);
    }
  }
}

TEST_CASE("attention: forward matches a direct per-head computation", "[ops][attention]") {
  // softmax rows sum to one; masked entries are exact zeros
  AttnFixture f(4);
  const Mat x = random_mat(3, 4, 93);
  ops::AttentionCache c;
  ops::attention_forward(f.w(2, true), x, c);
  for (const Mat& P : c.P) {
    for (Index i = 0; i < 3; ++i) CHECK(P.row(i).sum() == Approx(1.0).epsilon(kClosedFormTol));
    CHECK(P(0, 1) == 0.0);
    CHECK(P(0, 2) == 0.0);
    CHECK(P(1, 2) == 0.0);
  }
}

TEST_CASE("attention: heads on any number of threads give the same bits", "[ops][attention]") {
  // The heads run one per thread (attention_heads_forward/_vjp/_jvp), each head's products on that thread alone, so
  // their results cannot depend on the thread count; at n = 128, e = 64 OpenBLAS splits such a product between
  // threads when it is called outside a parallel region. (The projections around the heads are whole-matrix GEMMs
  // that OpenBLAS splits itself, and at 3 threads it changes their last bits: docs/experiments.md.)
  const Index n = 128, d = 256, heads = 4, e = d / heads, probes = 3;
  AttnFixture f(d);
  const Mat x = random_mat(n, d, 95);
  const Mat dO = random_mat(probes * n, d, 96);  // several cotangents stacked, as the matrix-free passes give them
  const Mat dqkv = random_mat(probes * n, 3 * d, 97);
  const int saved = omp_get_max_threads();
  for (const bool causal : {false, true}) {
    omp_set_num_threads(1);
    ops::AttentionCache base;
    ops::attention_forward(f.w(heads, causal), x, base);
    std::vector<Mat> out;
    for (int threads : {1, 2, 3}) {
      omp_set_num_threads(threads);
      ops::AttentionCache c = base;
      const ops::HeadsSpec spec = ops::HeadsSpec::classic(heads, d, causal);
      ops::attention_heads_forward(spec, c);
      out.push_back(c.O);
      out.push_back(ops::attention_heads_vjp(spec, c, dO));
      out.push_back(ops::attention_heads_jvp(spec, c, dqkv));
    }
    for (size_t k = 3; k < out.size(); ++k) {
      INFO("output " << k % 3 << " at " << k / 3 + 1 << " threads" << (causal ? ", causal" : ""));
      REQUIRE(out[k] == out[k % 3]);
    }
    // a head's products on its own thread == the same products outside a parallel region on 2 threads
    omp_set_num_threads(2);
    for (Index h = 0; h < heads; ++h) {
      const Mat& P = base.P[static_cast<size_t>(h)];
      REQUIRE(out[0].middleCols(h * e, e) == Mat(P * base.qkv.middleCols(2 * d + h * e, e)));
      REQUIRE(out[1].topRows(n).middleCols(2 * d + h * e, e) == Mat(P.transpose() * dO.topRows(n).middleCols(h * e, e)));
    }
  }
  omp_set_num_threads(saved);
}

TEST_CASE("attention: stacked cotangents equal each cotangent alone, bit for bit", "[ops][attention]") {
  // attention_heads_vjp runs every (copy, key/value head) pair's products on their own (batching the copies into
  // larger products was measured and bought nothing: docs/benchmarks.md), so each copy's rows are that copy's VJP
  // alone, to the bit. GQA (4 query heads on 2 key/value heads), a soft-cap, causal and not, 1 to 37 copies.
  const Index n = 5, e = 3, heads = 4, kv = 2;
  for (const bool causal : {false, true})
    for (const double cap : {0.0, 2.5}) {
      ops::HeadsSpec s;
      s.heads = heads;
      s.kv_heads = kv;
      s.head_dim = e;
      s.scale = 0.7;
      s.softcap = cap;
      s.causal = causal;
      ops::AttentionCache c;
      c.x = random_mat(n, 4, 80);
      c.qkv = random_mat(n, s.qkv_width(), 81);
      ops::attention_heads_forward(s, c);
      for (const Index copies : {1, 5, 16, 17, 37}) {
        const Mat dO = random_mat(copies * n, s.q_width(), 82 + static_cast<uint64_t>(copies));
        const Mat stacked = ops::attention_heads_vjp(s, c, dO);
        REQUIRE(stacked.rows() == copies * n);
        for (Index cp = 0; cp < copies; ++cp) {
          INFO("copy " << cp << " of " << copies << (causal ? ", causal" : "") << ", cap " << cap);
          REQUIRE(Mat(stacked.middleRows(cp * n, n)) == ops::attention_heads_vjp(s, c, Mat(dO.middleRows(cp * n, n))));
        }
      }
    }
}
