// tasks.cpp — see tasks.hpp. Every draw comes from Rng(seed, "<stream>/<index>"), so a sequence depends only on
// its seed, stream and index (not on the batch size or the thread that draws it).
#include "gradflow/train/tasks.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "gradflow/core/error.hpp"
#include "gradflow/core/rng.hpp"

namespace gradflow {
namespace {

constexpr int kSep = 0, kPad = 1, kFirstSymbol = 2;

int draw(Rng& r, int lo, int hi) {  // uniform integer in [lo, hi)
  const int v = lo + static_cast<int>(r.uniform() * (hi - lo));
  return std::min(v, hi - 1);
}

int draw_cumulative(Rng& r, const std::vector<double>& cdf) {
  const double u = r.uniform() * cdf.back();
  const auto it = std::upper_bound(cdf.begin(), cdf.end(), u);
  return static_cast<int>(std::min<std::ptrdiff_t>(it - cdf.begin(), static_cast<std::ptrdiff_t>(cdf.size()) - 1));
}

Index int_pow(Index b, int e) {
  Index r = 1;
  for (int i = 0; i < e; ++i) r *= b;
  return r;
}

}  // namespace

const std::vector<std::string>& Task::names() {
  static const std::vector<std::string> n{"copy", "reverse", "sort", "recall", "markov"};
  return n;
}

void validate_task(const TaskConfig& c) {
  const auto& n = Task::names();
  require(std::find(n.begin(), n.end(), c.name) != n.end(),
          "unknown --task '" + c.name + "'; fix: use copy, reverse, sort, recall or markov");
  require(c.seq_len >= 2, "--seq-len " + std::to_string(c.seq_len) + " is too short for a task; fix: --seq-len >= 2");
  if (c.name == "markov") {
    require(c.vocab >= 2, "--vocab " + std::to_string(c.vocab) + " is too small for markov; fix: --vocab >= 2");
    require(c.markov_order >= 1 && c.markov_order < c.seq_len,
            "--markov-order " + std::to_string(c.markov_order) + " must lie in 1.." + std::to_string(c.seq_len - 1) +
                "; fix: a smaller order or a longer --seq-len");
    require(static_cast<double>(int_pow(c.vocab, c.markov_order)) <= 65536,
            "--vocab^--markov-order = " + std::to_string(int_pow(c.vocab, c.markov_order)) +
                " contexts is too many for the exact entropy rate; fix: at most 65536 (e.g. --vocab 16 --markov-order 2)");
    require(c.markov_sharpness >= 0 && std::isfinite(c.markov_sharpness),
            "--markov-sharpness must be a finite number >= 0; fix: e.g. --markov-sharpness 2");
  } else {
    require(c.vocab >= 4, "--vocab " + std::to_string(c.vocab) + " is too small for " + c.name +
                              " (SEP, PAD and >= 2 symbols); fix: --vocab >= 4");
    if (c.name == "recall")
      require(c.seq_len >= 3, "--task recall needs --seq-len >= 3 (a key-value pair, the query and its answer); "
                              "fix: a longer --seq-len");
  }
}

Task::Task(TaskConfig cfg, uint64_t seed) : cfg_(std::move(cfg)) {
  validate_task(cfg_);
  if (cfg_.name != "markov") return;
  const Index V = cfg_.vocab, C = int_pow(V, cfg_.markov_order);
  Rng r(seed, "markov-chain");
  next_.assign(static_cast<size_t>(C), std::vector<double>(static_cast<size_t>(V)));
  std::vector<std::vector<double>> prob(static_cast<size_t>(C), std::vector<double>(static_cast<size_t>(V)));
  std::vector<double> entropy(static_cast<size_t>(C), 0.0);
  for (Index c = 0; c < C; ++c) {
    auto& p = prob[static_cast<size_t>(c)];
    for (auto& v : p) v = cfg_.markov_sharpness * r.normal();
    const double mx = *std::max_element(p.begin(), p.end());
    double z = 0;
    for (auto& v : p) z += (v = std::exp(v - mx));
    for (auto& v : p) v /= z;
    double h = 0, acc = 0;
    for (Index b = 0; b < V; ++b) {
      const double pb = p[static_cast<size_t>(b)];
      if (pb > 0) h -= pb * std::log(pb);
      next_[static_cast<size_t>(c)][static_cast<size_t>(b)] = (acc += pb);
    }
    entropy[static_cast<size_t>(c)] = h;
  }
  // stationary law of the context chain c = (a_1..a_K) -> (a_2..a_K, b) by power iteration
  std::vector<double> pi(static_cast<size_t>(C), 1.0 / static_cast<double>(C)), nxt(static_cast<size_t>(C));
  for (int it = 0; it < 200000; ++it) {
    std::fill(nxt.begin(), nxt.end(), 0.0);
    for (Index c = 0; c < C; ++c) {
      const Index shifted = (c * V) % C;
      for (Index b = 0; b < V; ++b)
        nxt[static_cast<size_t>(shifted + b)] += pi[static_cast<size_t>(c)] * prob[static_cast<size_t>(c)][static_cast<size_t>(b)];
    }
    double diff = 0;
    for (Index c = 0; c < C; ++c) diff += std::abs(nxt[static_cast<size_t>(c)] - pi[static_cast<size_t>(c)]);
    pi.swap(nxt);
    if (diff < 1e-15) break;
  }
  stationary_.resize(static_cast<size_t>(C));
  double acc = 0;
  floor_ = 0;
  for (Index c = 0; c < C; ++c) {
    floor_ += pi[static_cast<size_t>(c)] * entropy[static_cast<size_t>(c)];
    stationary_[static_cast<size_t>(c)] = (acc += pi[static_cast<size_t>(c)]);
  }
}

Sequence Task::sample(uint64_t seed, const std::string& stream, Index i) const {
  Rng r(seed, stream + "/" + std::to_string(i));
  const int n = static_cast<int>(cfg_.seq_len), V = static_cast<int>(cfg_.vocab);
  Sequence s;
  s.tokens.assign(static_cast<size_t>(n + 1), kPad);
  s.targets.assign(static_cast<size_t>(n), -1);
  auto mark = [&](int from, int to) {  // positions predicting tokens from..to-1
    for (int t = from; t < to; ++t) s.targets[static_cast<size_t>(t - 1)] = s.tokens[static_cast<size_t>(t)];
  };
  if (cfg_.name == "copy" || cfg_.name == "reverse" || cfg_.name == "sort") {
    const int k = n / 2;
    std::vector<int> a(static_cast<size_t>(k));
    for (auto& v : a) v = draw(r, kFirstSymbol, V);
    std::vector<int> ans = a;
    if (cfg_.name == "reverse") std::reverse(ans.begin(), ans.end());
    if (cfg_.name == "sort") std::sort(ans.begin(), ans.end());
    for (int j = 0; j < k; ++j) s.tokens[static_cast<size_t>(j)] = a[static_cast<size_t>(j)];
    s.tokens[static_cast<size_t>(k)] = kSep;
    for (int j = 0; j < k; ++j) s.tokens[static_cast<size_t>(k + 1 + j)] = ans[static_cast<size_t>(j)];
    mark(k + 1, 2 * k + 1);
  } else if (cfg_.name == "recall") {
    const int symbols = V - kFirstSymbol, nkeys = std::max(1, symbols / 2);
    const int p = std::max(1, std::min((n - 1) / 2, nkeys));
    std::vector<int> keys(static_cast<size_t>(nkeys));
    std::iota(keys.begin(), keys.end(), kFirstSymbol);
    for (int j = 0; j < p; ++j) std::swap(keys[static_cast<size_t>(j)], keys[static_cast<size_t>(draw(r, j, nkeys))]);
    std::vector<int> vals(static_cast<size_t>(p));
    for (auto& v : vals) v = draw(r, kFirstSymbol + nkeys, V);
    for (int j = 0; j < p; ++j) {
      s.tokens[static_cast<size_t>(2 * j)] = keys[static_cast<size_t>(j)];
      s.tokens[static_cast<size_t>(2 * j + 1)] = vals[static_cast<size_t>(j)];
    }
    const int q = draw(r, 0, p);
    s.tokens[static_cast<size_t>(2 * p)] = keys[static_cast<size_t>(q)];
    s.tokens[static_cast<size_t>(2 * p + 1)] = vals[static_cast<size_t>(q)];
    mark(2 * p + 1, 2 * p + 2);
  } else {  // markov
    const int K = cfg_.markov_order;
    const Index C = static_cast<Index>(stationary_.size());
    Index c = draw_cumulative(r, stationary_);
    for (int j = K - 1; j >= 0; --j) {  // context digits, most significant first
      s.tokens[static_cast<size_t>(j)] = static_cast<int>(c % V);
      c /= V;
    }
    c = 0;
    for (int j = 0; j < K; ++j) c = c * V + s.tokens[static_cast<size_t>(j)];
    for (int t = K; t <= n; ++t) {
      const int b = draw_cumulative(r, next_[static_cast<size_t>(c)]);
      s.tokens[static_cast<size_t>(t)] = b;
      c = (c * V) % C + b;
    }
    mark(K, n + 1);
  }
  return s;
}

std::vector<Sequence> Task::batch(uint64_t seed, const std::string& stream, Index count) const {
  std::vector<Sequence> b;
  b.reserve(static_cast<size_t>(count));
  for (Index i = 0; i < count; ++i) b.push_back(sample(seed, stream, i));
  return b;
}

}  // namespace gradflow
