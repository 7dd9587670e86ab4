// lm_loss.cpp — the next-token cross-entropy of `--loss lm` (see lm_loss.hpp).
#include "gradflow/run/lm_loss.hpp"

#include <cmath>

#include "gradflow/core/error.hpp"

namespace gradflow {

OutputLoss next_token_loss(ConstMatMap head, std::vector<int64_t> ids, std::shared_ptr<const void> owner,
                           double softcap) {
  return [head, ids = std::move(ids), owner = std::move(owner), softcap](const Mat& y, Mat& dL_dy) {
    const Index n = y.rows(), T = n - 1;
    if (T < 1 || static_cast<Index>(ids.size()) != n)
      throw Error("internal: next_token_loss on " + std::to_string(n) + " outputs and " + std::to_string(ids.size()) +
                      " ids", ErrorKind::Internal);
    Mat P = y.topRows(T) * head.transpose();  // (T, vocab) logits, then the softmax minus the one-hot target
    Mat slope;                                // d(capped)/d(logit) = 1 − tanh², with the cap
    if (softcap > 0) {
      const Mat th = (P.array() / softcap).tanh().matrix();
      slope = (1.0 - th.array().square()).matrix();
      P = softcap * th;
    }
    double loss = 0;
    for (Index t = 0; t < T; ++t) {
      const double m = P.row(t).maxCoeff();
      const double sum = (P.row(t).array() - m).exp().sum();
      const double lse = m + std::log(sum);
      const Index target = static_cast<Index>(ids[static_cast<size_t>(t + 1)]);
      loss += lse - P(t, target);
      P.row(t) = (P.row(t).array() - lse).exp();
      P(t, target) -= 1.0;
    }
    if (softcap > 0) P.array() *= slope.array();
    dL_dy = Mat::Zero(n, y.cols());
    dL_dy.topRows(T) = (P * head) / static_cast<double>(T);
    return loss / static_cast<double>(T);
  };
}

}  // namespace gradflow
