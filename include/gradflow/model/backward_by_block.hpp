// backward_by_block.hpp — Model::backward with the parameter gradients held one block at a time: block l's
// accumulators are allocated when its VJP starts, each handed to take(i, grad) once complete and freed (the
// allocator hands the same memory to block l − 1); the parameters outside the blocks live through the whole pass
// and are handed over at its end. The memory of a run whose report needs each gradient once (its norm, its error
// against another run) and not the tensors.
#pragma once
#include <functional>
#include <vector>

#include "gradflow/model/model.hpp"

namespace gradflow {

// grads: no tensor allocated (ParamGrads(m.params(), false)). dx (optional): dL/dx_l as Model::backward fills it.
// weights (optional): the hook that draws a block's weights before its VJP and frees them after (weights held per
// block), called outside the accumulators' lifetime.
void backward_by_block(const Model& m, const Trace& t, const Mat& dy, ParamGrads& grads, std::vector<Mat>* dx,
                       const Model::BlockHook* weights, const std::function<void(int, Mat&)>& take);

}  // namespace gradflow
