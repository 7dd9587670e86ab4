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
enum class Role { InProjW, InProjB, OutProjW, OutProjB, Linear1W, Linear1B, Linear2W, Linear2B, NormW, NormB, DytAlpha, Gate };

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
  static const std::vector<std::string> s = {"torch", "xavier", "xavier-normal", "gpt2"};
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
    }
    if (cfg.placement == "deepnorm") {
      const double beta = deepnorm_beta(cfg);
      if (r == Role::InProjW) v.middleRows(2 * d, d) *= beta;  // v_proj
      if (r == Role::OutProjW || r == Role::Linear1W || r == Role::Linear2W) v *= beta;
    }
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
