// lm_loss.hpp — `--loss lm`: a decoder's next-token cross-entropy through its LM head, on the analyzed output y
// (after the final norm). logits_t = y_t · Wᵀ with W the untied head (lm_head, embed_out; no bias) or the tied token
// embedding (GPT-2's wte, Gemma-2's embed_tokens); with a final soft-cap C (Gemma-2's final_logit_softcapping)
// logits_t <- C·tanh(logits_t / C). L = mean over t = 0 .. n-2 of −log softmax(logits_t)[id_{t+1}] (transformers
// shifts logits and labels by one and averages); dL/dy_t = ((softmax(logits_t) − onehot(id_{t+1})) ⊙ c'_t) · W /
// (n − 1) with c' = 1 − tanh²(z/C) (1 without a cap), and dL/dy_{n−1} = 0.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "gradflow/core/types.hpp"

namespace gradflow {

// Returns L and sets dL/dy (n, d); `head` is (vocab, d), `ids` the n token ids (n >= 2, each < vocab), `softcap`
// C (0: none). The head is not copied (GPT-2's is 0.3 GB in double): `owner` keeps its storage (the checkpoint
// read) alive as long as the loss.
using OutputLoss = std::function<double(const Mat& y, Mat& dL_dy)>;
OutputLoss next_token_loss(ConstMatMap head, std::vector<int64_t> ids, std::shared_ptr<const void> owner,
                           double softcap = 0);

}  // namespace gradflow
