// test_tasks.cpp — the task generators (src/train/tasks.cpp): the layout of each task, that the answer is a function
// of the input (floor 0), the Markov chain's entropy rate (exact for a uniform chain; a Monte-Carlo estimate from
// sampled sequences agrees within 4 standard errors otherwise), determinism and bad options.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "gradflow/core/error.hpp"
#include "gradflow/train/tasks.hpp"
#include "tolerances.hpp"

using namespace gradflow;

namespace {
TaskConfig cfg(const std::string& name, Index V = 10, Index n = 12) {
  TaskConfig c;
  c.name = name;
  c.vocab = V;
  c.seq_len = n;
  return c;
}
std::vector<int> targets_of(const Sequence& s) {
  std::vector<int> t;
  for (int x : s.targets)
    if (x >= 0) t.push_back(x);
  return t;
}
}  // namespace

TEST_CASE("train tasks: copy, reverse and sort layouts", "[train][quick]") {
  for (const std::string name : {"copy", "reverse", "sort"}) {
    INFO(name);
    const Task task(cfg(name), 1);
    REQUIRE(task.loss_floor() == 0.0);
    const Sequence s = task.sample(7, "x", 3);
    REQUIRE(s.tokens.size() == 13);
    REQUIRE(s.targets.size() == 12);
    const int k = 6;
    std::vector<int> a(s.tokens.begin(), s.tokens.begin() + k);
    for (int v : a) REQUIRE((v >= 2 && v < 10));
    REQUIRE(s.tokens[k] == 0);  // SEP
    std::vector<int> want = a;
    if (name == "reverse") std::reverse(want.begin(), want.end());
    if (name == "sort") std::sort(want.begin(), want.end());
    REQUIRE(targets_of(s) == want);
    for (int i = 0; i < k; ++i) REQUIRE(s.targets[static_cast<size_t>(i)] == -1);  // the input is not predicted
    REQUIRE(s.targets[static_cast<size_t>(k)] == want[0]);                        // SEP predicts the first answer
  }
}

TEST_CASE("train tasks: recall asks for the value of a key shown before", "[train][quick]") {
  const Task task(cfg("recall", 12, 11), 1);
  REQUIRE(task.loss_floor() == 0.0);
  for (int i = 0; i < 20; ++i) {
    const Sequence s = task.sample(2, "r", i);
    const auto t = targets_of(s);
    REQUIRE(t.size() == 1);
    const int p = 5;  // min((n-1)/2, symbols/2) = min(5, 5)
    const int q = s.tokens[2 * p];
    bool found = false;
    for (int j = 0; j < p; ++j)
      if (s.tokens[static_cast<size_t>(2 * j)] == q) {
        REQUIRE(s.tokens[static_cast<size_t>(2 * j + 1)] == t[0]);
        found = true;
      }
    REQUIRE(found);
    std::vector<int> keys;
    for (int j = 0; j < p; ++j) keys.push_back(s.tokens[static_cast<size_t>(2 * j)]);
    std::sort(keys.begin(), keys.end());
    REQUIRE(std::adjacent_find(keys.begin(), keys.end()) == keys.end());  // distinct keys: the answer is unique
  }
}

TEST_CASE("train tasks: markov floor is the entropy rate", "[train][quick]") {
  SECTION("uniform chain: ln V exactly") {
    TaskConfig c = cfg("markov", 5, 10);
    c.markov_sharpness = 0;
    const Task task(c, 1);
    REQUIRE(std::abs(task.loss_floor() - std::log(5.0)) < test::kClosedFormChainTol);
  }
  SECTION("random chain: Monte-Carlo estimate within 4 standard errors") {
    TaskConfig c = cfg("markov", 4, 40);
    c.markov_order = 2;
    c.markov_sharpness = 1.5;
    const Task task(c, 3);
    // empirical conditional frequencies from many sequences give -log P along the samples
    const int N = 3000;
    std::vector<double> counts(4 * 4 * 4, 0.0), ctx(16, 0.0);
    std::vector<Sequence> seqs;
    for (int i = 0; i < N; ++i) seqs.push_back(task.sample(5, "mc", i));
    for (const auto& s : seqs)
      for (size_t t = 2; t < s.tokens.size(); ++t) {
        const int cc = s.tokens[t - 2] * 4 + s.tokens[t - 1];
        counts[static_cast<size_t>(cc * 4 + s.tokens[t])] += 1;
        ctx[static_cast<size_t>(cc)] += 1;
      }
    double sum = 0, sq = 0;
    long m = 0;
    for (const auto& s : seqs)
      for (size_t t = 2; t < s.tokens.size(); ++t) {
        const int cc = s.tokens[t - 2] * 4 + s.tokens[t - 1];
        const double v = -std::log(counts[static_cast<size_t>(cc * 4 + s.tokens[t])] / ctx[static_cast<size_t>(cc)]);
        sum += v;
        sq += v * v;
        ++m;
      }
    const double mean = sum / m, se = std::sqrt((sq / m - mean * mean) / N);  // sequences as independent units
    INFO("floor " << task.loss_floor() << ", estimate " << mean << " ± " << se);
    REQUIRE(task.loss_floor() > 0.3);
    REQUIRE(task.loss_floor() < std::log(4.0));
    REQUIRE(std::abs(mean - task.loss_floor()) < 4 * se + 0.01);
    // targets: every position with a full context
    REQUIRE(targets_of(seqs[0]).size() == 39);
  }
}

TEST_CASE("train tasks: deterministic per (seed, stream, index), different across seeds", "[train][quick]") {
  const Task task(cfg("copy"), 1);
  REQUIRE(task.sample(4, "a", 2).tokens == task.sample(4, "a", 2).tokens);
  REQUIRE(task.batch(4, "a", 3)[2].tokens == task.sample(4, "a", 2).tokens);
  REQUIRE(task.sample(4, "a", 2).tokens != task.sample(5, "a", 2).tokens);
}

TEST_CASE("train tasks: bad options name the option", "[train][quick]") {
  REQUIRE_THROWS_WITH(validate_task(cfg("nope")), Catch::Contains("--task"));
  REQUIRE_THROWS_WITH(validate_task(cfg("copy", 3)), Catch::Contains("--vocab"));
  TaskConfig c = cfg("markov", 64, 12);
  c.markov_order = 4;
  REQUIRE_THROWS_WITH(validate_task(c), Catch::Contains("--markov-order"));
}
