// init.cpp — parameter initialization schemes (see init.hpp).
#include "gradflow/model/init.hpp"

#include <cmath>

#include "gradflow/error.hpp"
#include "gradflow/model/placement.hpp"
#include "gradflow/rng.hpp"

namespace gradflow {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Role of a parameter from its PyTorch name.
enum class Role { InProjW, InProjB, OutProjW, OutProjB, Linear1W, Linear1B, Linear2W, Linear2B, NormW, NormB, DytAlpha, Gate,
                  Ones };

Role role_of(const std::string& name) {
  if (ends_with(name, "self_attn.in_proj_weight")) return Role::InProjW;
  if (ends_with(name, "self_attn.in_proj_bias")) return Role::InProjB;
  if (ends_with(name, "out_proj.weight")) return Role::OutProjW;
  if (ends_with(name, "out_proj.bias")) return Role::OutProjB;
  if (ends_with(name, "linear1.weight")) return Role::Linear1W;
  if (ends_with(name, "linear1.bias")) return Role::Linear1B;
  if (ends_with(name, "linear2.weight")) return Role::Linear2W;
  if (ends_with(name, "linear2.bias")) return Role::Linear2B;
  if (ends_with(name, ".alpha")) return Role::DytAlpha;
  if (ends_with(name, "resweight")) return Role::Gate;
  // Admin's ω (set to 1 here, then profiled), NormFormer's w_resid and per-head c_attn: all start at 1
  if (ends_with(name, "_omega") || ends_with(name, "w_resid") || ends_with(name, "c_attn")) return Role::Ones;
  if (ends_with(name, ".weight")) return Role::NormW;
  return Role::NormB;
}

bool is_matrix(Role r) { return r == Role::InProjW || r == Role::OutProjW || r == Role::Linear1W || r == Role::Linear2W; }

// torch default for a Linear's bias: U(±1/√fan_in); fan_in of linear1 is d, of linear2 d_ff.
void torch_default(Role r, Mat& v, Rng& rng, Index d, Index dff) {
  const double kd = 1.0 / std::sqrt(static_cast<double>(d)), kff = 1.0 / std::sqrt(static_cast<double>(dff));
  switch (r) {
    case Role::InProjW: { const double b = std::sqrt(6.0 / static_cast<double>(d + 3 * d)); rng.fill_uniform(v, -b, b); break; }
    case Role::OutProjW: rng.fill_uniform(v, -kd, kd); break;
    case Role::Linear1W: case Role::Linear1B: rng.fill_uniform(v, -kd, kd); break;
    case Role::Linear2W: case Role::Linear2B: rng.fill_uniform(v, -kff, kff); break;
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
  static const std::vector<std::string> s = {"torch", "xavier", "xavier-normal", "gpt2", "t-fixup"};
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
  const Index d = cfg.d_model, dff = cfg.ff();
  const double inv_sqrt_2L = 1.0 / std::sqrt(2.0 * static_cast<double>(cfg.layers));
  for (auto& p : model.params().all()) {
    Rng rng(init.seed, p.name);
    const Role r = role_of(p.name);
    Mat& v = p.value;
    if (r == Role::NormW) { v.setOnes(); continue; }
    if (r == Role::NormB) { v.setZero(); continue; }
    if (r == Role::DytAlpha) { v.setConstant(0.5); continue; }
    if (r == Role::Gate) { v.setConstant(cfg.rezero_alpha); continue; }
    if (r == Role::Ones) { v.setOnes(); continue; }
    if (init.scheme == "torch") {
      torch_default(r, v, rng, d, dff);
    } else if (init.scheme == "xavier") {
      if (is_matrix(r)) xavier_uniform(v, rng);
      else torch_default(r, v, rng, d, dff);
    } else if (init.scheme == "xavier-normal") {
      if (is_matrix(r)) xavier_normal(v, rng);
      else v.setZero();
    } else if (init.scheme == "gpt2") {
      if (is_matrix(r)) rng.fill_normal(v, 0.02);
      else v.setZero();
      if (r == Role::OutProjW || r == Role::Linear2W) v *= inv_sqrt_2L;
    } else if (init.scheme == "t-fixup") {
      // Xavier uniform, biases 0; the v rows are redrawn as Xavier of their own (d, d) block (×√2, as the
      // reference code does for fairseq's gain-1/√2 v_proj); then v, out_proj, linear1, linear2 × 0.67·L^(-1/4)
      if (is_matrix(r)) xavier_uniform(v, rng);
      else v.setZero();
      const double t = tfixup_scale(cfg);
      if (r == Role::InProjW) v.middleRows(2 * d, d) *= std::sqrt(2.0) * t;
      if (r == Role::OutProjW || r == Role::Linear1W || r == Role::Linear2W) v *= t;
    }
    // placement-specific scalings of the reference code, after the scheme (weights only, see docs/placements.md)
    if (cfg.placement == "deepnorm" || cfg.placement == "sub-ln") {
      // DeepNet: ÷(8L)^(1/4) (β);  Sub-LN (Magneto): ×sqrt(ln 2L) (γ);  on v_proj, out_proj, linear1, linear2
      const double k = cfg.placement == "deepnorm" ? deepnorm_beta(cfg) : subln_gamma(cfg);
      if (r == Role::InProjW) v.middleRows(2 * d, d) *= k;  // v_proj
      if (r == Role::OutProjW || r == Role::Linear1W || r == Role::Linear2W) v *= k;
    }
    if (cfg.placement == "b2t" && is_matrix(r)) v *= b2t_scale(cfg);  // takase/b2t_connection rescaling_init
    if (r == Role::OutProjW || r == Role::Linear2W) v *= init.scale;
  }
}

Mat random_normal(uint64_t seed, const std::string& stream, Index rows, Index cols) {
  Mat m(rows, cols);
  Rng rng(seed, stream);
  rng.fill_normal(m, 1.0);
  return m;
}

}  // namespace gradflow
