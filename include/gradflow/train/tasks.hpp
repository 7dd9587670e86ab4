// tasks.hpp — the synthetic next-token tasks of `gradflow train`, generated from a seed, each with a known
// best achievable loss (the floor) so "converged" has a meaning. A sequence is n+1 tokens s_0..s_n; the model
// reads s_0..s_{n-1} (n = --seq-len) and position i predicts s_{i+1}; only positions marked as targets count.
//   copy     a_1..a_k SEP a_1..a_k PAD...        k = n/2 symbols; targets: the k answer tokens; floor 0
//   reverse  a_1..a_k SEP a_k..a_1 PAD...        as copy, answer reversed; floor 0
//   sort     a_1..a_k SEP sort(a) PAD...         as copy, answer sorted ascending; floor 0
//   recall   k_1 v_1 .. k_p v_p q v_q PAD...     p distinct keys, q one of them; target: v_q only; floor 0
//   markov   s_0..s_n of a random order-K Markov chain over all V tokens, started in its stationary law;
//            targets: every position i >= K-1 (full context); floor = the entropy rate sum_c pi(c) H(P(.|c)) (nats)
// Tokens: SEP = 0, PAD = 1, symbols 2..V-1 (copy, reverse, sort, recall); keys of recall are the first half of
// the symbols, values the second half. Markov uses all V tokens as symbols.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gradflow/core/types.hpp"

namespace gradflow {

struct Sequence {
  std::vector<int> tokens;   // n+1 tokens s_0..s_n
  std::vector<int> targets;  // n entries: targets[i] = s_{i+1} when position i is a target, else -1
};

struct TaskConfig {
  std::string name = "copy";  // --task copy|reverse|sort|recall|markov
  Index vocab = 16;           // --vocab V (copy/reverse/sort/recall need V >= 4, markov V >= 2)
  Index seq_len = 16;         // --seq-len n (model positions)
  int markov_order = 2;       // --markov-order K
  double markov_sharpness = 2.0;  // --markov-sharpness: P(.|c) = softmax(sharpness * z), z ~ N(0, 1)
};

class Task {
 public:
  Task(TaskConfig cfg, uint64_t seed);  // the seed fixes the Markov chain (train and eval share it)
  const TaskConfig& config() const { return cfg_; }
  double loss_floor() const { return floor_; }
  // One sequence drawn from the named stream (e.g. "train-step-12", "eval"), index i of that stream.
  Sequence sample(uint64_t seed, const std::string& stream, Index i) const;
  std::vector<Sequence> batch(uint64_t seed, const std::string& stream, Index count) const;
  static const std::vector<std::string>& names();

 private:
  TaskConfig cfg_;
  double floor_ = 0;
  // markov: contexts c = (s_{t-K}, .., s_{t-1}) as base-V numbers; next_[c] = cumulative P(.|c); stationary_[c]
  std::vector<std::vector<double>> next_;
  std::vector<double> stationary_;
};

// Validates the task options against the vocabulary and length; throws Error naming the option and the fix.
void validate_task(const TaskConfig& cfg);

}  // namespace gradflow
