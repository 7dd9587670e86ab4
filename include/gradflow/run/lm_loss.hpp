// lm_loss.hpp — `--loss lm`: GPT-2's next-token cross-entropy through its tied head, on the analyzed output y
// (after ln_f). logits_t = y_t · Wteᵀ (GPT2LMHeadModel's lm_head shares wte, no bias); L = mean over
// t = 0 .. n-2 of −log softmax(logits_t)[id_{t+1}] (transformers shifts logits and labels by one and averages);
// dL/dy_t = (softmax(logits_t) − onehot(id_{t+1})) · Wte / (n − 1), and dL/dy_{n−1} = 0.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "gradflow/core/types.hpp"

namespace gradflow {

// Returns L and sets dL/dy (n, d); `wte` is (vocab, d), `ids` the n token ids (n >= 2, each < vocab). wte is not
// copied (GPT-2's is 0.3 GB in double): `owner` keeps its storage (the checkpoint read) alive as long as the loss.
using OutputLoss = std::function<double(const Mat& y, Mat& dL_dy)>;
OutputLoss tied_lm_loss(ConstMatMap wte, std::vector<int64_t> ids, std::shared_ptr<const void> owner);

}  // namespace gradflow
