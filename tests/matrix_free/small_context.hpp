// small_context.hpp — a small model with its forward/backward pass (AnalysisContext), for the matrix-free tests:
// N = n·d = 4·8 = 32, so every explicit Jacobian is cheap and exact.
#pragma once
#include <memory>
#include <string>

#include "gradflow/run/context.hpp"
#include "gradflow/model/init.hpp"
#include "small_model.hpp"

namespace gradflow::test {

struct SmallContext {
  std::unique_ptr<Model> model;
  std::unique_ptr<AnalysisContext> ctx;
};

inline SmallContext make_small_context(const std::string& placement, Index layers = 4, uint64_t seed = 5,
                                       Index tokens = 4) {
  SmallContext s;
  s.model = std::make_unique<Model>(small_model(placement, layers));
  InitConfig init;
  init.seed = seed;
  initialize(*s.model, init);
  AnalysisOptions opts;
  opts.seq_len = tokens;
  opts.progress = false;
  s.ctx = std::make_unique<AnalysisContext>(*s.model, random_normal(seed, "input", tokens, 8), opts,
                                             make_backend(BackendKind::Cpu), nullptr, seed);
  return s;
}

}  // namespace gradflow::test
