// train_fixtures.hpp — the small training run the train tests share (copy, 2 layers, d = 16, batch 4) and a report
// without its timing fields (what "bit for bit" compares).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "gradflow/train/train.hpp"

namespace gradflow::test {

inline TrainConfig small_training(const std::string& placement, long steps) {
  TrainConfig c;
  c.model.placement = placement;
  c.model.layers = 2;
  c.model.d_model = 16;
  c.model.heads = 2;
  c.task.name = "copy";
  c.task.vocab = 8;
  c.task.seq_len = 8;
  c.steps = steps;
  c.batch = 4;
  c.lr = 3e-3;
  c.warmup = 5;
  c.log_every = 5;
  c.eval_size = 8;
  c.init.seed = 3;
  return c;
}

inline nlohmann::ordered_json without_timing(nlohmann::ordered_json r) {
  r.erase("elapsed_seconds");
  r.erase("timing_seconds");
  return r;
}

}  // namespace gradflow::test
