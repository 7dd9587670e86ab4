// post.cpp — Post-LN (Vaswani et al. 2017): h = LN1(x + λA(x)); y = LN2(h + λF(h)), no final norm.
#include "model/placements/recipes.hpp"

namespace gradflow {
namespace {

class PostLN final : public Placement {
 public:
  std::string name() const override { return "post"; }
  std::string display_name() const override { return "Post-LN"; }
  std::string equation() const override { return "h = LN1(x + A(x)); y = LN2(h + F(h))"; }
  std::string paper() const override { return "Vaswani et al. 2017, Attention Is All You Need"; }
  std::vector<UnitSpec> block(const ModelConfig& cfg, Index) const override { return recipes::post_block(cfg); }
};

}  // namespace

std::unique_ptr<Placement> make_post_placement() { return std::make_unique<PostLN>(); }

}  // namespace gradflow
