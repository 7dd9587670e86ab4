// attention_entropy.cpp — how each head of block l spreads its attention (entropy collapse; Zhai et al. 2023):
// per head, the mean over queries of the entropy of its softmax row, the maximum that mean can take (ln n, or the
// mean of ln(i+1) under the causal mask), and the mean probability a query gives itself; the block's fields are
// their means over heads. The probabilities are those the attention op saved in its forward cache (the softmax of
// the heads of this block's attention unit, whatever norm precedes it; docs/math.md §10). Cost: O(h·n²) per block.
#include <variant>

#include "gradflow/linalg/token_geometry.hpp"
#include "gradflow/report/fields.hpp"
#include "gradflow/run/analysis.hpp"

namespace gradflow {
namespace {

class AttentionEntropy final : public Analysis {
 public:
  std::string name() const override { return "attention-entropy"; }
  std::string description() const override {
    return "per head: mean attention entropy, its maximum, and the mean self-attention probability";
  }
  void run(const AnalysisContext& ctx, Json& report) const override {
    const bool causal = ctx.model.config().causal;
    for (Index l = 0; l < ctx.model.layers(); ++l) {
      const auto& units = ctx.trace.blocks[static_cast<size_t>(l)].units;
      for (const UnitCache& u : units) {
        const auto* a = std::get_if<AttentionBranchCache>(&u.g);
        if (!a) continue;
        Json heads = Json::array();
        AttentionStats mean;
        for (const Mat& P : a->attn.P) {
          const AttentionStats s = attention_stats(P, causal);
          heads.push_back(Json{{fields::kEntropy, s.entropy}, {fields::kSelfAttention, s.self_attention}});
          mean.entropy += s.entropy;
          mean.max_entropy += s.max_entropy;
          mean.self_attention += s.self_attention;
        }
        const double h = static_cast<double>(a->attn.P.size());
        report[fields::kLayers][static_cast<size_t>(l)][fields::kAttention] =
            Json{{fields::kEntropy, mean.entropy / h},
                 {fields::kMaxEntropy, mean.max_entropy / h},
                 {fields::kSelfAttention, mean.self_attention / h},
                 {fields::kHeads, std::move(heads)}};
        break;  // one attention unit per block in every placement
      }
    }
  }
};

}  // namespace

std::unique_ptr<Analysis> make_attention_entropy() { return std::make_unique<AttentionEntropy>(); }

}  // namespace gradflow
