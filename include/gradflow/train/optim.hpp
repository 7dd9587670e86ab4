// optim.hpp — the optimizer of `gradflow train`, written to match PyTorch bit for bit in its order of operations:
//   Adam (torch.optim.Adam, single-tensor path, L2 weight decay, no amsgrad), update t = 1, 2, ...:
//     g ← g + wd·θ;  m ← m + (1−β1)(g − m);  v ← β2·v + (1−β2)·g²
//     θ ← θ − (lr/(1−β1^t)) · m / (sqrt(v)/sqrt(1−β2^t) + ε)
//   gradient clipping (torch.nn.utils.clip_grad_norm_): N = sqrt(Σ ||g_i||²) over every tensor;
//     when N > c every gradient is multiplied by c/(N + 1e-6)
//   learning-rate schedules, for update t = 1..S with warmup W and base rate η:
//     t <= W:           η·t/W                              (linear warmup; none when W = 0)
//     constant:         η
//     linear:           η·(S − t)/(S − W)                  (reaches 0 after the last update)
//     inverse-sqrt:     η·sqrt(max(W, 1)/t)                (Vaswani et al.; continuous at t = W)
#pragma once
#include <string>
#include <vector>

#include "gradflow/core/types.hpp"
#include "gradflow/kernels/precision.hpp"

namespace gradflow {

struct AdamOptions {
  double beta1 = 0.9;           // the article's and Vaswani et al.'s
  double beta2 = 0.98;
  double eps = 1e-9;
  double weight_decay = 0.0;    // --weight-decay: L2 added to the gradient, as torch.optim.Adam
  // The type the parameters, the moments and the decayed gradient are stored in (train --precision: float32, the
  // master weights; each stored value rounded, the arithmetic between stores in float64). F64: the plain update.
  Precision storage = Precision::F64;
};

// One parameter's multipliers of the rate, ε and weight decay (a parametrization's, model/parametrization.hpp; as
// a torch param group's own lr, eps and weight_decay = the base value × these). All 1: the plain update, bit for bit.
struct AdamScale {
  double lr = 1, eps = 1, weight_decay = 1;
};

class Adam {
 public:
  Adam(const std::vector<Mat*>& params, AdamOptions opts, std::vector<AdamScale> scales = {});  // {}: all 1
  // One update of every parameter with its gradient (grads[i] matches params[i]; grads are not modified).
  // When delta_sq is given, delta_sq[i] = ||Δθ_i||² of this update.
  void step(const std::vector<const Mat*>& grads, double lr, std::vector<double>* delta_sq = nullptr);
  long steps() const { return t_; }
  const AdamOptions& options() const { return o_; }

 private:
  std::vector<Mat*> params_;
  std::vector<Mat> m_, v_;
  std::vector<AdamScale> scales_;
  AdamOptions o_;
  long t_ = 0;
};

// Returns the total norm before clipping; scales the gradients in place when it exceeds max_norm (> 0).
double clip_grad_norm(const std::vector<Mat*>& grads, double max_norm);

// The learning rate of update t (1-based) of S; kind: constant | linear | inverse-sqrt. Error on an unknown kind.
double scheduled_lr(const std::string& kind, double base, long warmup, long steps, long t);
void validate_schedule(const std::string& kind);

}  // namespace gradflow
