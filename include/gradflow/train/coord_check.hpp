// coord_check.hpp — `gradflow coord-check` (issue 35): the coordinate check of microsoft/mup (mup/coord_check.py) for
// width and for depth. For every size (a width d, or a depth L) and seed, the model is trained `steps` Adam updates on
// the same batches (train.hpp with coord_stats), and each step t = 1..T records, before update t (t = 1: at
// initialization, as mup's), the mean |entry| of the stream, of each branch's contribution, of the attention logits
// (means over the blocks) and of the output logits, and the update size ||Δθ||/||θ|| of each parameter role. The
// verdict of a quantity at step t: the exponent b of its growth, the least-squares slope of log2(value) on
// log2(size) per seed, as the mean over seeds with its standard error; "grows" when b > band, "shrinks" when
// b < -band, else "stable". A parametrization passes for a quantity when no step "grows" (μP's logits shrink as
// width^(-1/2) at initialization without a zero readout: the mup README's remark, not a blow-up).
//
// Width: d takes each value with every other width scaled with it (d_ff and --head-dim in proportion, the heads
// fixed), as the parametrizations assume (model/parametrization.hpp); depth: L takes each value. A parametrization's
// unset --base-width/--base-depth default to the smallest width/depth checked (the model's own d or L when that
// axis is not checked).
#pragma once
#include <vector>

#include <nlohmann/json.hpp>

#include "gradflow/train/train.hpp"

namespace gradflow {

struct CoordCheckConfig {
  TrainConfig base;           // the model, task and optimizer; base.steps = T (records t = 1..T)
  std::vector<Index> widths;  // --widths (sorted, distinct, >= 2 of them), or empty
  std::vector<Index> depths;  // --depths, or empty
  int seeds = 3;              // --seeds: seeds base.init.seed, +1, ...
  double band = 0.25;         // --band: |exponent| at most this is "stable"
};

// Validates (Error naming the option and the fix) and fills the defaults of the bases.
CoordCheckConfig resolve_coord_check(CoordCheckConfig c);
// The coord-check report: config, one entry per axis (records per size and seed, verdicts), timing.
nlohmann::ordered_json coord_check(const CoordCheckConfig& c);
// Least-squares slope of y on x (>= 2 points); NaN when fewer points or x constant.
double ls_slope(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace gradflow
