// test_params.cpp — ParamStore and ParamGrads (include/gradflow/core/params.hpp): PyTorch shapes and their stored
// (rows, cols), zero-filled tensors, roles kept as given, indices in insertion order, lookup by name and its errors, and gradient
// accumulators laid out like the store (one index addresses a parameter and its gradient), allocated on demand,
// released, zeroed, and accumulated (+=) by the model's backward pass.
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "derivative_checks.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/model/init.hpp"
#include "gradflow/model/model.hpp"
#include "gradflow/core/params.hpp"
#include "small_model.hpp"

using namespace gradflow;
using namespace gradflow::test;

namespace {

std::string error_message(const std::function<void()>& f, ErrorKind* kind = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (kind) *kind = e.kind();
    return e.what();
  }
  return "";
}

ParamStore three_params() {
  ParamStore s;
  s.add("layers.0.linear1.weight", {6, 4}, ParamRole::Linear1Weight);  // (out, in) as itself
  s.add("layers.0.linear1.bias", {6}, ParamRole::Linear1Bias);         // 1-D: one (1, 6) row
  s.add("rezero_alpha", {1}, ParamRole::Gate);                         // a scalar: (1, 1), PyTorch shape {1}
  return s;
}

}  // namespace

TEST_CASE("ParamStore: shapes, zero fill, insertion order, lookup", "[core][params]") {
  ParamStore s;
  REQUIRE(s.size() == 0);
  REQUIRE(s.numel() == 0);
  REQUIRE(s.add("layers.0.linear1.weight", {6, 4}, ParamRole::Linear1Weight) == 0);
  REQUIRE(s.add("layers.0.linear1.bias", {6}, ParamRole::Linear1Bias) == 1);
  REQUIRE(s.add("rezero_alpha", {1}, ParamRole::Gate) == 2);
  REQUIRE(s.size() == 3);
  REQUIRE(s.numel() == 6 * 4 + 6 + 1);

  REQUIRE(s[0].rows() == 6);
  REQUIRE(s[0].cols() == 4);
  REQUIRE(s[1].rows() == 1);
  REQUIRE(s[1].cols() == 6);
  REQUIRE(s[2].rows() == 1);
  REQUIRE(s[2].cols() == 1);
  for (int i = 0; i < 3; ++i) REQUIRE(s[i].isZero(0.0));

  REQUIRE(s.all()[0].name == "layers.0.linear1.weight");
  REQUIRE(s.all()[1].name == "layers.0.linear1.bias");
  REQUIRE(s.all()[2].name == "rezero_alpha");
  REQUIRE(s.all()[0].shape == std::vector<int64_t>{6, 4});  // PyTorch's shape kept for checkpoints
  REQUIRE(s.all()[1].shape == std::vector<int64_t>{6});
  REQUIRE(s.all()[2].shape == std::vector<int64_t>{1});
  REQUIRE(s.all()[0].role == ParamRole::Linear1Weight);  // the role given at creation is kept
  REQUIRE(s.all()[1].role == ParamRole::Linear1Bias);
  REQUIRE(s.all()[2].role == ParamRole::Gate);

  REQUIRE(s.index("layers.0.linear1.bias") == 1);
  REQUIRE(s.has("rezero_alpha"));
  REQUIRE_FALSE(s.has("rezero"));
  // at(name), operator[] and all()[i].value are one tensor
  s.at("layers.0.linear1.bias")(0, 3) = 2.5;
  REQUIRE(s[1](0, 3) == 2.5);
  REQUIRE(s.all()[1].value(0, 3) == 2.5);
  const ParamStore& cs = s;
  REQUIRE(cs.at("layers.0.linear1.bias")(0, 3) == 2.5);
  REQUIRE(cs[1](0, 3) == 2.5);
}

TEST_CASE("ParamStore: errors name the tensor", "[core][params]") {
  ParamStore s = three_params();
  ErrorKind kind = ErrorKind::BadInput;
  REQUIRE(error_message([&] { s.index("layers.0.linear2.weight"); }) == "no parameter named 'layers.0.linear2.weight'");
  REQUIRE(error_message([&] { s.at("nope"); }) == "no parameter named 'nope'");
  REQUIRE(error_message([&] { s.add("rezero_alpha", {1}, ParamRole::Gate); }, &kind) == "internal: parameter 'rezero_alpha' added twice");
  REQUIRE(kind == ErrorKind::Internal);
  REQUIRE(error_message([&] { s.add("t3", {2, 2, 2}, ParamRole::NormWeight); }) == "internal: parameter 't3' must be 1-D or 2-D");
  REQUIRE(error_message([&] { s.add("t0", {}, ParamRole::NormWeight); }) == "internal: parameter 't0' must be 1-D or 2-D");
  REQUIRE(s.size() == 3);  // a refused add leaves the store as it was
  REQUIRE_FALSE(s.has("t3"));
}

TEST_CASE("ParamGrads: laid out like the store, zero, on demand, released, zeroed", "[core][params]") {
  ParamStore s = three_params();
  s[0].setConstant(1.0);  // values do not leak into gradients
  SECTION("allocated: every accumulator zero, shaped like its parameter") {
    ParamGrads g(s);
    REQUIRE(g.size() == s.size());
    for (int i = 0; i < 3; ++i) {
      REQUIRE(g[i].rows() == s[i].rows());
      REQUIRE(g[i].cols() == s[i].cols());
      REQUIRE(g[i].isZero(0.0));
    }
    g[0].setConstant(3.0);
    g[2](0, 0) = -1.0;
    g.zero();
    for (int i = 0; i < 3; ++i) REQUIRE(g[i].isZero(0.0));
    REQUIRE(g[0].rows() == 6);  // zero() keeps the shapes
  }
  SECTION("not allocated: empty until allocate(i), empty again after release(i)") {
    ParamGrads g(s, false);
    REQUIRE(g.size() == 3);
    for (int i = 0; i < 3; ++i) REQUIRE(g[i].size() == 0);
    g.allocate(1);
    REQUIRE(g[1].rows() == 1);
    REQUIRE(g[1].cols() == 6);
    REQUIRE(g[1].isZero(0.0));
    REQUIRE(g[0].size() == 0);
    g.zero();  // zero() leaves unallocated accumulators unallocated
    REQUIRE(g[0].size() == 0);
    REQUIRE(g[1].size() == 6);
    g[1].setConstant(4.0);
    g.allocate(1);  // allocate zero-fills again
    REQUIRE(g[1].isZero(0.0));
    g.release(1);
    REQUIRE(g[1].size() == 0);
  }
}

TEST_CASE("ParamGrads: the backward pass accumulates (+=), so two passes give twice one", "[core][params]") {
  Model m(small_model("post", 2));
  InitConfig init;
  init.seed = 3;
  initialize(m, init);
  const Index n = 4, d = m.d_model();
  const Mat x0 = random_normal(3, "input", n, d), gy = random_normal(3, "cotangent", n, d);
  const Trace t = m.forward(x0);
  ParamGrads once(m.params()), twice(m.params());
  REQUIRE(once.size() == m.params().size());
  m.backward(t, gy, &once);
  m.backward(t, gy, &twice);
  m.backward(t, gy, &twice);
  bool any_nonzero = false;
  for (int i = 0; i < static_cast<int>(once.size()); ++i) {
    INFO(m.params().all()[static_cast<size_t>(i)].name);
    REQUIRE(once[i].rows() == m.params()[i].rows());
    REQUIRE(once[i].cols() == m.params()[i].cols());
    // a parameter used more than once (norm gains) takes several += per pass, so (a + b) + (a + b) is summed as
    // ((a + b) + a) + b: equal to 2·once up to rounding; a pass that overwrote instead would give half of it
    REQUIRE(rel_err(twice[i], Mat(2.0 * once[i])) <= kAlgebraTol);
    any_nonzero = any_nonzero || !once[i].isZero(0.0);
  }
  REQUIRE(any_nonzero);
}
