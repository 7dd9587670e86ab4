// hybridnorm.cpp — HybridNorm and HybridNorm* (Zhuo et al. 2025, "HybridNorm: Towards Stable and Efficient
// Transformer Training via Hybrid Normalization"; reference code BryceZhuo/HybridNorm, dense_model/olmo/model.py,
// OLMoSequentialBlock with configs/exps/1.2B-dense-HybriedNorm.yaml):
//   h = x + λ A'(x), A' attention whose Q, K, V are each normalized per head (use_{query,key,value}_norm; norms of
//   width d/h shared by the heads), no input norm (attn_norm: false);
//   y = norm2(h) + λ F(norm2(h))  (ffn_residual_after_norm: true: the FFN's residual starts from the normalized
//   stream), written here as norm2 the post-norm of the attention unit and a plain FFN unit — the same map;
//   a final norm (ln_f).
// HybridNorm* (README: norm_pos_special_config "{0: {'attn_norm': True, 'ffn_residual': False}}"): block 0 is
// Pre-Norm in attention (norm1 before the QKV projection, QKV norms kept) and in the FFN: h = x + λA'(norm1(x));
// y = h + λF(norm2(h)).
#include "model/placements/recipes.hpp"

namespace gradflow {
namespace {

class HybridNorm final : public Placement {
 public:
  explicit HybridNorm(bool star) : star_(star) {}
  std::string name() const override { return star_ ? "hybridnorm-star" : "hybridnorm"; }
  std::string display_name() const override { return star_ ? "HybridNorm*" : "HybridNorm"; }
  std::string equation() const override {
    std::string e = "h = x + A'(x), A' with per-head norms on Q, K, V; y = LN2(h) + F(LN2(h)); final LN";
    if (star_) e += "; block 0: h = x + A'(LN1(x)); y = h + F(LN2(h))";
    return e;
  }
  std::string paper() const override {
    return std::string("Zhuo et al. 2025, HybridNorm") + (star_ ? " (HybridNorm*: block 0 Pre-Norm)" : "");
  }
  std::vector<UnitSpec> block(const ModelConfig& cfg, Index layer) const override {
    UnitSpec a = recipes::unit(recipes::kA, cfg), f = recipes::unit(recipes::kF, cfg);
    a.qkv_norm = true;
    if (star_ && layer == 0) {
      a.pre_norm = "norm1";
      f.pre_norm = "norm2";
    } else {
      a.post_norm = "norm2";  // h' = norm2(x + A'(x)), then y = h' + F(h')
    }
    return {a, f};
  }
  bool final_norm_default(const ModelConfig&) const override { return true; }

 private:
  bool star_;
};

}  // namespace

std::unique_ptr<Placement> make_hybridnorm_placement() { return std::make_unique<HybridNorm>(false); }
std::unique_ptr<Placement> make_hybridnorm_star_placement() { return std::make_unique<HybridNorm>(true); }

}  // namespace gradflow
