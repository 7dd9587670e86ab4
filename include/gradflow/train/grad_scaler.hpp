// grad_scaler.hpp — the loss scale of `train --precision bf16|f16 --loss-scale S|dynamic`: fixed, or dynamic as
// PyTorch's torch.cuda.amp.GradScaler with its defaults (torch/cuda/amp/grad_scaler.py, _amp_update_scale_):
//   the scale starts at 2^16; a step whose (scaled) gradients hold an Inf or NaN is skipped and the scale multiplied
//   by 0.5 (backoff_factor); after 2000 (growth_interval) consecutive clean steps it is multiplied by 2
//   (growth_factor) and the count restarts. A fixed scale never changes and skips nothing (an Inf/NaN gradient is then
//   the run's divergence, as without scaling).
#pragma once
#include "gradflow/kernels/precision.hpp"

namespace gradflow {

struct GradScalerOptions {
  double init_scale = 65536.0;  // 2^16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  long growth_interval = 2000;
};

class GradScaler {
 public:
  explicit GradScaler(LossScale s, GradScalerOptions o = {});
  double scale() const { return scale_; }
  bool dynamic() const { return dynamic_; }
  // After a step's backward pass: found_inf = some scaled gradient is Inf or NaN. Returns whether the optimizer step
  // is skipped (dynamic only), and moves the scale as GradScaler.update does.
  bool update(bool found_inf);
  long skipped() const { return skipped_; }  // steps skipped so far

 private:
  bool dynamic_;
  double scale_;
  GradScalerOptions o_;
  long growth_tracker_ = 0;
  long skipped_ = 0;
};

}  // namespace gradflow
