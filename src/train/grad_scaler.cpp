// grad_scaler.cpp — see grad_scaler.hpp; the arithmetic of torch's _amp_update_scale_ (aten/src/ATen/native/cuda/
// AmpKernels.cu): on inf, scale *= backoff and the tracker restarts; else the tracker counts up and at the interval
// the scale grows (only when the grown scale is finite) and the tracker restarts.
#include "gradflow/train/grad_scaler.hpp"

#include <cmath>

namespace gradflow {

GradScaler::GradScaler(LossScale s, GradScalerOptions o)
    : dynamic_(s.dynamic), scale_(s.dynamic ? o.init_scale : s.value), o_(o) {}

bool GradScaler::update(bool found_inf) {
  if (!dynamic_) return false;
  if (found_inf) {
    scale_ *= o_.backoff_factor;
    growth_tracker_ = 0;
    ++skipped_;
    return true;
  }
  if (++growth_tracker_ == o_.growth_interval) {
    const double grown = scale_ * o_.growth_factor;
    if (std::isfinite(grown)) scale_ = grown;
    growth_tracker_ = 0;
  }
  return false;
}

}  // namespace gradflow
