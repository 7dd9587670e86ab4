// block_weights.cpp — see block_weights.hpp.
#include "gradflow/model/block_weights.hpp"

#include "gradflow/core/error.hpp"
#include "gradflow/model/init.hpp"

namespace gradflow {

BlockWeights::BlockWeights(Model& model, InitConfig init)
    : model_(model), init_(std::move(init)), deferred_(static_cast<size_t>(model.layers())) {
  auto& all = model_.params().all();
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].held) continue;
    const Index l = model_.block_of_param(static_cast<int>(i));
    if (l < 0) throw Error("internal: a deferred parameter outside the blocks: '" + all[i].name + "'", ErrorKind::Internal);
    deferred_[static_cast<size_t>(l)].push_back(static_cast<int>(i));
  }
  hook_ = [this](Index l, bool done) {
    ParamStore& p = model_.params();
    for (int i : deferred_[static_cast<size_t>(l)]) {
      if (done) {
        p.release(i);
      } else {
        p.materialize(i);
        initialize_param(model_.config(), init_, p.all()[static_cast<size_t>(i)]);
      }
    }
  };
}

}  // namespace gradflow
