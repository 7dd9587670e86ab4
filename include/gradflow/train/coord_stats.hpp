// coord_stats.hpp — the coordinate sizes a coordinate check records (microsoft/mup's coord_check: the mean |entry| of
// each module's output), summed over the sequences of a batch. Per block l = 0..L-1:
//   stream        the block's output x_{l+1}
//   attn_branch   what the attention unit adds to the stream: c·b (the branch output times its coefficient, so a
//                 depth parametrization's m_L^(-α) is in it)
//   ffn_branch    the same for the feed-forward unit
//   attn_logits   the attention logits S = scale·Q_j K_gᵀ before any soft-cap, over the pairs the mask keeps
// and output_logits: the readout's logits z (after the parametrization's readout multiplier).
#pragma once
#include <vector>

#include "gradflow/core/types.hpp"
#include "gradflow/model/model.hpp"

namespace gradflow {

struct MeanAbs {
  double sum = 0, count = 0;
  void add(const Mat& m) { sum += m.cwiseAbs().sum(); count += static_cast<double>(m.size()); }
  void add(const MeanAbs& o) { sum += o.sum; count += o.count; }
  double mean() const { return count > 0 ? sum / count : 0.0; }
};

struct CoordStats {
  std::vector<MeanAbs> stream, attn_branch, ffn_branch, attn_logits;  // per block
  MeanAbs output_logits;
  void add(const CoordStats& o);  // sequence by sequence (an empty one takes o's shape)
};

// The statistics of one forward pass of `model` (trace t) with output logits z.
CoordStats coord_stats(const Model& model, const Trace& t, const Mat& z);

}  // namespace gradflow
