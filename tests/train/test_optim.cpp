// test_optim.cpp — Adam, gradient clipping and the learning-rate schedules (src/train/optim.cpp) against values
// computed by hand from torch.optim.Adam's and clip_grad_norm_'s formulas.
#include <catch2/catch.hpp>

#include <cmath>

#include "gradflow/train/optim.hpp"
#include "tolerances.hpp"

using namespace gradflow;

TEST_CASE("train optim: Adam's first two updates by hand", "[train][quick]") {
  Mat p(1, 2);
  p << 1.0, -2.0;
  Adam adam({&p}, AdamOptions{});
  Mat g(1, 2);
  g << 0.5, -0.25;
  const double lr = 0.1, b1 = 0.9, b2 = 0.98, eps = 1e-9;
  // update 1: m = 0.1 g, v = 0.02 g², m̂ = g, v̂ = g²: step = lr·g/(|g| + eps)
  std::vector<double> dsq;
  adam.step({&g}, lr, &dsq);
  const double e0 = 1.0 - lr * 0.5 / (0.5 + eps), e1 = -2.0 - lr * (-0.25) / (0.25 + eps);
  REQUIRE(std::abs(p(0) - e0) < test::kClosedFormTol);
  REQUIRE(std::abs(p(1) - e1) < test::kClosedFormTol);
  REQUIRE(std::abs(dsq[0] - ((e0 - 1.0) * (e0 - 1.0) + (e1 + 2.0) * (e1 + 2.0))) < test::kClosedFormTol);
  // update 2 with gradient h
  Mat h(1, 2);
  h << -1.0, 0.75;
  adam.step({&h}, lr);
  for (int k = 0; k < 2; ++k) {
    const double m1 = (1 - b1) * g(k), v1 = (1 - b2) * g(k) * g(k);
    const double m2 = b1 * m1 + (1 - b1) * h(k), v2 = b2 * v1 + (1 - b2) * h(k) * h(k);
    const double mhat = m2 / (1 - b1 * b1), vhat = v2 / (1 - b2 * b2);
    const double before = k == 0 ? e0 : e1;
    const double expect = before - lr * mhat / (std::sqrt(vhat) + eps);
    INFO("entry " << k);
    REQUIRE(std::abs(p(k) - expect) < test::kClosedFormChainTol);
  }
  REQUIRE(adam.steps() == 2);
}

TEST_CASE("train optim: Adam's L2 weight decay is added to the gradient", "[train][quick]") {
  Mat p(1, 1), q(1, 1), g(1, 1), gq(1, 1);
  p << 2.0;
  q << 2.0;
  g << 0.3;
  gq << 0.3 + 0.1 * 2.0;
  AdamOptions wd;
  wd.weight_decay = 0.1;
  Adam a({&p}, wd), b({&q}, AdamOptions{});
  a.step({&g}, 0.01);
  b.step({&gq}, 0.01);
  REQUIRE(p(0) == q(0));
}

TEST_CASE("train optim: gradient clipping as clip_grad_norm_", "[train][quick]") {
  Mat a(1, 2), b(2, 1);
  a << 3.0, 0.0;
  b << 0.0, 4.0;  // total norm 5
  const double n = clip_grad_norm({&a, &b}, 1.0);
  REQUIRE(n == 5.0);
  const double coef = 1.0 / (5.0 + 1e-6);
  REQUIRE(std::abs(a(0) - 3.0 * coef) < test::kSameDoubleTol);
  REQUIRE(std::abs(b(1) - 4.0 * coef) < test::kSameDoubleTol);
  Mat c(1, 1);
  c << 0.5;
  REQUIRE(clip_grad_norm({&c}, 1.0) == 0.5);
  REQUIRE(c(0) == 0.5);  // below the threshold: untouched
}

TEST_CASE("train optim: schedules by hand", "[train][quick]") {
  // warmup W = 4, S = 10, base 1
  REQUIRE(scheduled_lr("constant", 1.0, 4, 10, 1) == 0.25);
  REQUIRE(scheduled_lr("linear", 1.0, 4, 10, 4) == 1.0);
  REQUIRE(scheduled_lr("constant", 1.0, 4, 10, 7) == 1.0);
  REQUIRE(std::abs(scheduled_lr("linear", 1.0, 4, 10, 7) - 3.0 / 6.0) < test::kSameDoubleTol);
  REQUIRE(scheduled_lr("linear", 1.0, 4, 10, 10) == 0.0);
  REQUIRE(std::abs(scheduled_lr("inverse-sqrt", 1.0, 4, 10, 9) - std::sqrt(4.0 / 9.0)) < test::kSameDoubleTol);
  REQUIRE(scheduled_lr("inverse-sqrt", 1.0, 4, 10, 4) == 1.0);  // continuous at the end of warmup
  // no warmup
  REQUIRE(scheduled_lr("inverse-sqrt", 2.0, 0, 10, 1) == 2.0);
  REQUIRE(std::abs(scheduled_lr("inverse-sqrt", 2.0, 0, 10, 4) - 1.0) < test::kSameDoubleTol);
  REQUIRE(scheduled_lr("constant", 2.0, 0, 10, 3) == 2.0);
  REQUIRE_THROWS(scheduled_lr("cosine", 1.0, 0, 10, 1));
}

TEST_CASE("train optim: per-parameter scales are a param group's own lr, eps and weight decay", "[train][quick]") {
  // two tensors: the first with scales (1/4, 1/8, 4), the second unscaled; each must move exactly as a plain Adam
  // with lr·s_lr, eps·s_eps, weight_decay·s_wd (torch: a param group with those values)
  Mat p(1, 2), q(1, 2), p_ref(1, 2), q_ref(1, 2);
  p << 1.0, -2.0;
  q << 0.5, 3.0;
  p_ref = p;
  q_ref = q;
  AdamOptions o;
  o.eps = 1e-3;  // large enough that its scale shows
  o.weight_decay = 0.01;
  Adam scaled({&p, &q}, o, {AdamScale{0.25, 0.125, 4.0}, AdamScale{}});
  AdamOptions op = o;
  op.eps = o.eps * 0.125;
  op.weight_decay = o.weight_decay * 4.0;
  Adam plain_p({&p_ref}, op), plain_q({&q_ref}, o);
  Mat g(1, 2), h(1, 2);
  g << 0.5, -0.25;
  h << -0.1, 0.2;
  for (int t = 0; t < 3; ++t) {
    const double lr = 0.1 * (t + 1);
    scaled.step({&g, &h}, lr);
    plain_p.step({&g}, lr * 0.25);
    plain_q.step({&h}, lr);
  }
  CHECK(p == p_ref);
  CHECK(q == q_ref);
  CHECK_THROWS(Adam({&p, &q}, o, {AdamScale{}}));  // one scale per tensor
}
