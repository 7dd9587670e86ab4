// init.cpp — parameter initialization schemes (see init.hpp).
#include "gradflow/model/init.hpp"

#include <cmath>

#include "gradflow/core/cancel.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/model/placement.hpp"
#include "gradflow/core/rng.hpp"

namespace gradflow {
namespace {

using Role = ParamRole;

// torch default for a Linear's bias: U(±1/√fan_in); fan_in of linear1 and linear3 is d, of linear2 d_ff.
void torch_default(Role r, Mat& v, Rng& rng, Index d, Index dff) {
  const double kd = 1.0 / std::sqrt(static_cast<double>(d)), kff = 1.0 / std::sqrt(static_cast<double>(dff));
  switch (r) {
    case Role::InProjWeight: {  // xavier_uniform over ((h + 2K)·e, d): (3d, d) for classic heads
      const double b = std::sqrt(6.0 / static_cast<double>(v.cols() + v.rows()));
      rng.fill_uniform(v, -b, b);
      break;
    }
    case Role::OutProjWeight: rng.fill_uniform(v, -kd, kd); break;
    case Role::Linear1Weight: case Role::Linear1Bias: case Role::Linear3Weight: case Role::Linear3Bias:
      rng.fill_uniform(v, -kd, kd);
      break;
    case Role::Linear2Weight: case Role::Linear2Bias: rng.fill_uniform(v, -kff, kff); break;
    default: v.setZero(); break;
  }
}

void xavier_uniform(Mat& v, Rng& rng) {
  const double b = std::sqrt(6.0 / static_cast<double>(v.rows() + v.cols()));
  rng.fill_uniform(v, -b, b);
}

void xavier_normal(Mat& v, Rng& rng, double gain = 1.0) {
  rng.fill_normal(v, gain * std::sqrt(2.0 / static_cast<double>(v.rows() + v.cols())));
}

}  // namespace

const std::vector<std::string>& init_schemes() {
  static const std::vector<std::string> s = {"torch", "xavier", "xavier-normal", "gpt2", "t-fixup", "hf-normal"};
  return s;
}

void initialize(Model& model, const InitConfig& init) {
  const ModelConfig& cfg = model.config();
  bool known = false;
  for (const auto& s : init_schemes()) known = known || s == init.scheme;
  if (!known) {
    std::string list;
    for (const auto& s : init_schemes()) list += (list.empty() ? "" : ", ") + s;
    throw Error("unknown --init '" + init.scheme + "'; fix: use one of " + list);
  }
  for (auto& p : model.params().all()) {
    check_cancel();  // a front end asked to stop (core/cancel.hpp)
    if (p.held) initialize_param(cfg, init, p);  // a deferred one is drawn when its block is (block_weights.hpp)
  }
}

void initialize_param(const ModelConfig& cfg, const InitConfig& init, Param& p) {
  const Index d = cfg.d_model, dff = cfg.ff();
  const double inv_sqrt_2L = 1.0 / std::sqrt(2.0 * static_cast<double>(cfg.layers));
  const Placement& placement = find_placement(cfg.placement);
  Rng rng(init.seed, p.name);
  const Role r = p.role;
  Mat& v = p.value;
  switch (r) {
    case Role::NormWeight: v.setConstant(cfg.norm_offset ? 0.0 : 1.0); return;  // γ = 1 either way
    case Role::NormBias: v.setZero(); return;
    case Role::NormAlpha: v.setConstant(0.5); return;  // DyT's α
    // the scheme's own parameters: ReZero's gate (--rezero-alpha), Admin's ω (1, then profiled), NormFormer's
    // w_resid and c_attn (1)
    case Role::Gate: case Role::SkipVector: case Role::HeadScale:
      v.setConstant(placement.initial_value(cfg, r));
      return;
    case Role::Embedding: case Role::OutputHead:
      throw Error("internal: initialize() met a training parameter '" + p.name + "'", ErrorKind::Internal);
    default: break;
  }
  if (init.scheme == "torch") {
    torch_default(r, v, rng, d, dff);
  } else if (init.scheme == "xavier") {
    if (is_weight_matrix(r)) xavier_uniform(v, rng);
    else torch_default(r, v, rng, d, dff);
  } else if (init.scheme == "xavier-normal") {
    if (is_weight_matrix(r)) xavier_normal(v, rng);
    else v.setZero();
  } else if (init.scheme == "gpt2") {
    if (is_weight_matrix(r)) rng.fill_normal(v, 0.02);
    else v.setZero();
    // GPT-2's own depth factor; a depth parametrization's branch multiplier replaces it (nanoGPT-mup, completep)
    if ((r == Role::OutProjWeight || r == Role::Linear2Weight) && !cfg.param.scales_depth()) v *= inv_sqrt_2L;
  } else if (init.scheme == "hf-normal") {
    // the decoder families' Hugging Face _init_weights: every Linear weight N(0, initializer_range), biases 0 (no
    // depth factor: unlike GPT-2's, these classes scale no projection by depth)
    if (is_weight_matrix(r)) rng.fill_normal(v, kHfInitializerRange);
    else v.setZero();
  } else if (init.scheme == "t-fixup") {
    // Xavier uniform, biases 0; the v rows are redrawn as Xavier of their own (d, d) block (×√2, as the
    // reference code does for fairseq's gain-1/√2 v_proj); then v, out_proj, linear1 (and a gated branch's
    // linear3), linear2 × 0.67·L^(-1/4)
    if (is_weight_matrix(r)) xavier_uniform(v, rng);
    else v.setZero();
    const double t = tfixup_scale(cfg);
    if (r == Role::InProjWeight) v.bottomRows(cfg.kv() * cfg.hd()) *= std::sqrt(2.0) * t;  // v: the last K·e rows
    if (r == Role::OutProjWeight || r == Role::Linear1Weight || r == Role::Linear2Weight || r == Role::Linear3Weight)
      v *= t;
  }
  // the placement's own rescaling of the reference code, after the scheme (DeepNet β, Sub-LN γ, B2T L^(-1/2))
  placement.rescale_initial(cfg, r, d, v);
  if (r == Role::OutProjWeight || r == Role::Linear2Weight) v *= init.scale;
  const double width = cfg.factors().init(r, init.scheme);  // the parametrization's (parametrization.hpp; 1 under sp)
  if (width != 1.0) v *= width;
}

void profile_initialization(Model& model, const Mat& x0) { find_placement(model.config().placement).profile(model, x0); }

double tfixup_scale(const ModelConfig& cfg) { return 0.67 * std::pow(static_cast<double>(cfg.layers), -0.25); }

Mat random_normal(uint64_t seed, const std::string& stream, Index rows, Index cols) {
  Mat m(rows, cols);
  Rng rng(seed, stream);
  rng.fill_normal(m, 1.0);
  return m;
}

}  // namespace gradflow
