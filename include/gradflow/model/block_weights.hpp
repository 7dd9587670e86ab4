// block_weights.hpp — a model's weight matrices held one block at a time (WeightResidency::PerBlock): a pass that
// reaches block l draws its matrices from their seeded streams (initialize_param, init.hpp: the values initialize()
// gives, bit for bit) and frees them when it leaves. A gradients-only analysis then holds one block's weights
// instead of all of them (the full-scale model's 605 MiB of float64 matrices), at the cost of drawing each twice
// (forward and backward). Only for a seeded initialization without a data-dependent step (not Admin's profile)
// and passes that visit each block through the hook (Model::forward, Model::backward); reading a matrix that is not
// held is an internal error (ParamStore).
#pragma once
#include <vector>

#include "gradflow/model/config.hpp"
#include "gradflow/model/model.hpp"

namespace gradflow {

class BlockWeights {
 public:
  // model: built with WeightResidency::PerBlock and given to initialize() (which draws everything else); it must
  // outlive this.
  BlockWeights(Model& model, InitConfig init);
  BlockWeights(const BlockWeights&) = delete;  // the hook refers to this object
  BlockWeights& operator=(const BlockWeights&) = delete;
  // hook(l, false) draws block l's deferred matrices; hook(l, true) frees them.
  const Model::BlockHook& hook() const { return hook_; }

 private:
  Model& model_;
  InitConfig init_;
  std::vector<std::vector<int>> deferred_;  // per block, the indices of its deferred parameters
  Model::BlockHook hook_;
};

}  // namespace gradflow
