// model.hpp — a stack of L Transformer encoder blocks over n tokens of width d, in double precision,
// with an optional final norm ("the head"). Block l maps x_l -> x_{l+1}; y = head(x_L).
// Parameters are named as in a PyTorch nn.TransformerEncoder state_dict (layers.{l}.self_attn.in_proj_weight,
// ..., norm.weight). Every block has forward, VJP (input and parameters), JVP and its explicit Jacobian.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "gradflow/kernels/cpu_kernels.hpp"
#include "gradflow/model/config.hpp"
#include "gradflow/model/residual_unit.hpp"
#include "gradflow/core/params.hpp"

namespace gradflow {

struct BlockCache {
  std::vector<UnitCache> units;
};

// Everything one forward pass saves: x[l] is the input of block l (x[L] the last block's output), the model's
// state at depth l: (n, d), or for a two-stream scheme (ResiDual) the pair [x_a | x_d], (n, 2d), with
// x[0] = [x_0 | x_0] (Model::state_width()).
struct Trace {
  std::vector<Mat> x;              // L + 1 entries, each (n, state_width)
  std::vector<BlockCache> blocks;  // L entries
  NormCache head;                  // final norm, when there is one
  Mat y;                           // (n, d) network output
};

// Where a model's weight matrices live: all of them for its lifetime (the default), or one block at a time
// (block_weights.hpp: drawn from the init's streams when a pass reaches the block, freed when it leaves).
enum class WeightResidency { Resident, PerBlock };

class Model {
 public:
  // Parameters are created zero (init.hpp); under WeightResidency::PerBlock the weight matrices are created deferred
  // (ParamStore::materialize). Every pass runs its arithmetic through `kernels` (kernel_ops.hpp, memory on the
  // host): the double-precision reference by default; they must outlive the model.
  // branch_kernels (autocast, precision_kernels.hpp): the kernels of the low-precision tensors — the residual
  // branches run on them and `kernels` (then autocast's float32 set) serve the stream, the norms and the casts
  // between the two (docs/math.md §16). Null: `kernels` for everything.
  explicit Model(ModelConfig cfg, const KernelOps& kernels = cpu_kernels(),
                 WeightResidency residency = WeightResidency::Resident, const KernelOps* branch_kernels = nullptr);
  const KernelOps& kernels() const { return *kernels_; }

  const ModelConfig& config() const { return cfg_; }
  ParamStore& params() { return params_; }
  const ParamStore& params() const { return params_; }
  Index layers() const { return static_cast<Index>(blocks_.size()); }
  Index d_model() const { return cfg_.d_model; }
  bool has_final_norm() const { return head_.has_value(); }
  const NormLayer& head_norm() const { return *head_; }  // the final norm (has_final_norm() must hold)
  // The width of the state between blocks: d, or 2d for a two-stream scheme (ResiDual: [x_a | x_d], the head
  // y = x_a + FinalNorm(x_d)). Every x_l, dL/dx_l, B_l (state → state) and P_l (state → output) is in it.
  bool two_streams() const { return two_streams_; }
  Index state_width() const { return two_streams_ ? 2 * cfg_.d_model : cfg_.d_model; }
  // The stream the sublayers read (x_a for a two-stream state; the state itself otherwise): token geometry and
  // the branch ratios are of this stream.
  Mat read_stream(const Mat& state) const { return two_streams_ ? Mat(state.leftCols(cfg_.d_model)) : state; }
  // The state at depth 0 for an input x_0 (n, d): x_0, or [x_0 | x_0] (k stacked copies allowed).
  Mat initial_state(const Mat& x0) const;
  static std::string layer_prefix(Index l) { return "layers." + std::to_string(l) + "."; }
  // The block l whose parameter params()[i] is (its name starts with layer_prefix(l)), or -1 outside the blocks.
  Index block_of_param(int i) const { return param_block_[static_cast<size_t>(i)]; }
  const std::vector<ResidualUnit>& block(Index l) const { return blocks_[static_cast<size_t>(l)]; }
  std::vector<ResidualUnit>& block(Index l) { return blocks_[static_cast<size_t>(l)]; }

  // Called as hook(l, false) before and hook(l, true) after a pass runs block l (optional everywhere).
  using BlockHook = std::function<void(Index block, bool done)>;
  // Whole network; hook around each block's forward, from the bottom block up.
  Trace forward(const Mat& x0, const BlockHook* hook = nullptr) const;
  // Backward from dL/dy: returns dL/dx_0 (n, d), the input's gradient (for two streams the sum of the two
  // streams' gradients at depth 0); fills dx_layers[l] = dL/dx_l, the state's (l = 0..L, the last = dL/dx_L)
  // when given, and accumulates parameter gradients into g when given.
  // hook around the VJP of each block, from the top block down; the head's VJP comes first and is not hooked.
  Mat backward(const Trace& t, const Mat& dy, ParamGrads* g, std::vector<Mat>* dx_layers = nullptr,
               const BlockHook* hook = nullptr) const;
  // Tangent through blocks l..L-1 and the head: P_l · v (v may hold stacked copies).
  Mat jvp_from(const Trace& t, Index l, const Mat& v) const;
  // The output tangent J_x0 dx0 + J_θ dθ of the whole network (dθ shaped like the parameters: one tangent per
  // parameter, in a ParamGrads): the forward-mode derivative in the parameters (docs/math.md §11).
  Mat jvp_with_params(const Trace& t, const Mat& dx0, const ParamGrads& dtheta) const;
  // Cotangent back through the head and blocks L-1..l: P_lᵀ · u (u may hold stacked copies).
  Mat vjp_to(const Trace& t, Index l, const Mat& u) const;

  // One block.
  Mat block_forward(Index l, const Mat& x, BlockCache& c) const;
  Mat block_vjp(Index l, const BlockCache& c, const Mat& dy, ParamGrads* g) const;
  Mat block_jvp(Index l, const BlockCache& c, const Mat& dx) const;
  Jacobian block_jacobian(Index l, const BlockCache& c) const;
  // The input of every residual unit of block l, then the block's output (units + 1 entries), rebuilt from the
  // trace without running a branch again: unit 0's input is x_l, unit u + 1's is PostNorm(z_u) or z_u with
  // z_u = s ⊙ x_u + c·b_u [+ x_l] (b_u from the cache); the forward pass's operations, so the last entry is
  // t.x[l + 1] bit for bit. O(units·n·d).
  std::vector<Mat> unit_inputs(const Trace& t, Index l) const;

  // The head (final norm, identity when absent).
  Mat head_forward(const Mat& x, NormCache& c) const;
  Mat head_vjp(const NormCache& c, const Mat& dy, ParamGrads* g) const;
  Mat head_jvp(const NormCache& c, const Mat& dx) const;
  Jacobian head_jacobian(const NormCache& c, Index n_tokens) const;

 private:
  NormLayer make_norm(const std::string& prefix, Index width);
  ModelConfig cfg_;
  const KernelOps* kernels_;
  ParamStore params_;
  std::vector<std::vector<ResidualUnit>> blocks_;
  std::optional<NormLayer> head_;
  std::vector<Index> param_block_;  // block_of_param, recorded as the constructor adds each block's parameters
  bool two_streams_ = false;        // every unit is dual-stream (UnitSpec::dual_stream): the state is [x_a | x_d]
};

}  // namespace gradflow
