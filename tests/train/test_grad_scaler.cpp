// test_grad_scaler.cpp — the loss scale of mixed-precision training (src/train/grad_scaler.cpp) against the rules of
// torch.cuda.amp.GradScaler with its defaults: a fixed scale never moves, a dynamic one starts at 2^16, halves and
// skips the step on Inf/NaN, doubles after 2000 clean steps, and never grows to Inf.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "gradflow/train/grad_scaler.hpp"

using namespace gradflow;

TEST_CASE("grad scaler: a fixed scale never moves and skips nothing", "[train][quick]") {
  GradScaler g(LossScale{false, 1024.0});
  CHECK_FALSE(g.dynamic());
  for (int i = 0; i < 5000; ++i) CHECK_FALSE(g.update(i % 3 == 0));
  CHECK(g.scale() == 1024.0);
  CHECK(g.skipped() == 0);
}

TEST_CASE("grad scaler: dynamic starts at 2^16, backs off on Inf, grows after 2000 clean steps", "[train][quick]") {
  GradScaler g(LossScale{true, 1.0});
  CHECK(g.scale() == 65536.0);
  CHECK(g.update(true));  // skipped, halved
  CHECK(g.scale() == 32768.0);
  for (int i = 0; i < 1999; ++i) CHECK_FALSE(g.update(false));
  CHECK(g.scale() == 32768.0);
  CHECK_FALSE(g.update(false));  // the 2000th clean step in a row
  CHECK(g.scale() == 65536.0);
  // an Inf restarts the count: 1999 clean, Inf, 1999 clean leaves the scale where the Inf put it
  for (int i = 0; i < 1999; ++i) g.update(false);
  CHECK(g.update(true));
  for (int i = 0; i < 1999; ++i) g.update(false);
  CHECK(g.scale() == 32768.0);
  CHECK(g.skipped() == 2);
}

TEST_CASE("grad scaler: a scale that would grow to Inf stays", "[train][quick]") {
  GradScalerOptions o;
  o.init_scale = std::numeric_limits<double>::max();
  o.growth_interval = 1;
  GradScaler g(LossScale{true, 1.0}, o);
  g.update(false);
  CHECK(g.scale() == std::numeric_limits<double>::max());
}
