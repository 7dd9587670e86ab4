// lm_loss.cpp — the tied-head next-token cross-entropy of `--loss lm` (see lm_loss.hpp).
#include "gradflow/run/lm_loss.hpp"

#include <cmath>

#include "gradflow/core/error.hpp"

namespace gradflow {

OutputLoss tied_lm_loss(ConstMatMap wte, std::vector<int64_t> ids, std::shared_ptr<const void> owner) {
  return [wte, ids = std::move(ids), owner = std::move(owner)](const Mat& y, Mat& dL_dy) {
    const Index n = y.rows(), T = n - 1;
    if (T < 1 || static_cast<Index>(ids.size()) != n)
      throw Error("internal: tied_lm_loss on " + std::to_string(n) + " outputs and " + std::to_string(ids.size()) +
                      " ids", ErrorKind::Internal);
    Mat P = y.topRows(T) * wte.transpose();  // (T, vocab) logits, then the softmax minus the one-hot target
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
    dL_dy = Mat::Zero(n, y.cols());
    dL_dy.topRows(T) = (P * wte) / static_cast<double>(T);
    return loss / static_cast<double>(T);
  };
}

}  // namespace gradflow
