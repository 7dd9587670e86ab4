// attention_gradients.cpp — the attention weights' gradients of block l split as PyTorch packs them:
// ‖dL/dW_q‖, ‖dL/dW_k‖, ‖dL/dW_v‖ (the row blocks 0..d, d..2d, 2d..3d of in_proj_weight's gradient) beside
// ‖dL/dW_out‖ (out_proj.weight), and the query/key share (‖g_q‖² + ‖g_k‖²) / (‖g_q‖² + ‖g_k‖² + ‖g_v‖² + ‖g_out‖²):
// rank collapse makes the query and key gradients vanish first (Noci et al. 2022). The norms are taken in the
// shared backward pass (AnalysisContext::in_proj_part_norms), so this costs nothing more (docs/math.md §10).
#include "gradflow/report/fields.hpp"
#include "gradflow/report/finite_json.hpp"
#include "gradflow/run/analysis.hpp"

namespace gradflow {
namespace {

class AttentionGradients final : public Analysis {
 public:
  std::string name() const override { return "attention-gradients"; }
  std::string description() const override {
    return "||dL/dW_q||, ||dL/dW_k||, ||dL/dW_v|| (in_proj_weight's row blocks) and ||dL/dW_out|| of every block";
  }
  void run(const AnalysisContext& ctx, Json& report) const override {
    const auto& all = ctx.model.params().all();
    std::vector<Json> per_block(static_cast<size_t>(ctx.model.layers()), Json::object());
    std::vector<double> out(per_block.size(), 0.0);
    for (size_t i = 0; i < all.size(); ++i) {
      const Index l = ctx.model.block_of_param(static_cast<int>(i));
      if (l < 0) continue;
      if (all[i].role == ParamRole::InProjWeight) {
        const auto& q = ctx.in_proj_part_norms[i];
        per_block[static_cast<size_t>(l)][fields::kQuery] = q[0];
        per_block[static_cast<size_t>(l)][fields::kKey] = q[1];
        per_block[static_cast<size_t>(l)][fields::kValue] = q[2];
      } else if (all[i].role == ParamRole::OutProjWeight) {
        out[static_cast<size_t>(l)] = ctx.param_grad_norms[i];
      }
    }
    for (size_t l = 0; l < per_block.size(); ++l) {
      Json& g = per_block[l];
      g[fields::kOut] = out[l];
      const double q = g[fields::kQuery].get<double>(), k = g[fields::kKey].get<double>(),
                   v = g[fields::kValue].get<double>();
      const double qk = q * q + k * k, total = qk + v * v + out[l] * out[l];
      report[fields::kLayers][l][fields::kAttentionGradNorms] = std::move(g);
      report[fields::kLayers][l][fields::kQkGradShare] = finite_or_null(qk / total);
    }
  }
};

}  // namespace

std::unique_ptr<Analysis> make_attention_gradients() { return std::make_unique<AttentionGradients>(); }

}  // namespace gradflow
