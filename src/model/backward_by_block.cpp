// backward_by_block.cpp — see backward_by_block.hpp.
#include "gradflow/model/backward_by_block.hpp"

namespace gradflow {

void backward_by_block(const Model& m, const Trace& t, const Mat& dy, ParamGrads& grads, std::vector<Mat>* dx,
                       const Model::BlockHook* weights, const std::function<void(int, Mat&)>& take) {
  const auto& params = m.params().all();
  std::vector<std::vector<int>> of_block(static_cast<size_t>(m.layers()));
  std::vector<int> outside;
  for (size_t i = 0; i < params.size(); ++i) {
    const Index l = m.block_of_param(static_cast<int>(i));
    (l >= 0 ? of_block[static_cast<size_t>(l)] : outside).push_back(static_cast<int>(i));
  }
  const auto finish = [&](int i) {
    take(i, grads[i]);
    grads.release(i);
  };
  for (int i : outside) grads.allocate(i);
  const Model::BlockHook hook = [&](Index l, bool done) {
    if (weights && !done) (*weights)(l, false);
    for (int i : of_block[static_cast<size_t>(l)]) done ? finish(i) : grads.allocate(i);
    if (weights && done) (*weights)(l, true);
  };
  m.backward(t, dy, &grads, dx, &hook);
  for (int i : outside) finish(i);
}

}  // namespace gradflow
