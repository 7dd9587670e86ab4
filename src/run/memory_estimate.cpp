// memory_estimate.cpp — see memory_estimate.hpp.
#include "gradflow/run/memory_estimate.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "gradflow/core/error.hpp"
#include "gradflow/core/format_bytes.hpp"
#include "gradflow/model/placement.hpp"
#include "gradflow/run/options.hpp"

namespace gradflow {

MemoryEstimate& MemoryEstimate::add(std::string what, double bytes) {
  parts.push_back({std::move(what), bytes});
  return *this;
}

double MemoryEstimate::total() const {
  double t = 0;
  for (const auto& p : parts) t += p.bytes;
  return t;
}

std::string MemoryEstimate::describe() const {
  const double t = total();
  std::vector<Part> shown;
  for (const auto& p : parts)
    if (p.bytes >= 0.01 * t) shown.push_back(p);
  std::stable_sort(shown.begin(), shown.end(), [](const Part& a, const Part& b) { return a.bytes > b.bytes; });
  std::string out = "about " + format_bytes(t);
  for (size_t i = 0; i < shown.size(); ++i)
    out += (i == 0 ? " (" : ", ") + shown[i].what + " " + format_bytes(shown[i].bytes) + (i + 1 == shown.size() ? ")" : "");
  return out;
}

namespace {

// Parameters of one block, from its recipe (residual_unit.hpp): the sublayers' weights and biases, each norm
// counted as the largest kind (DyT: γ, β and α), and the scheme's extra gains, gates and skip vectors.
double block_parameters(const ModelConfig& cfg, const std::vector<UnitSpec>& units) {
  const double d = static_cast<double>(cfg.d_model), ff = static_cast<double>(cfg.ff());
  const double h = static_cast<double>(cfg.heads);
  auto norm = [](double width) { return 2 * width + 1; };
  double p = 0;
  for (const UnitSpec& u : units) {
    // in_proj (3d, d) + 3d, out_proj (d, d) + d; linear1 (ff, d) + ff, linear2 (d, ff) + d, a gated branch's linear3
    // (ff, d) + ff (the biases counted even under --bias off: an upper bound)
    // attention: in_proj ((h + 2K)·e, d) + bias, out_proj (d, h·e) + d (4d² + 4d for classic heads), QK-norms
    const double qw = static_cast<double>(cfg.q_width()), qkvw = static_cast<double>(cfg.qkv_width());
    if (u.kind == SublayerKind::Attention) p += qkvw * d + qkvw + d * qw + d + (cfg.qk_norm != QkNorm::None ? 2 * norm(qkvw) : 0);
    else p += (cfg.gated() ? 3 : 2) * d * ff + (cfg.gated() ? 2 : 1) * ff + d;
    for (const std::string* n : {&u.pre_norm, &u.branch_norm, &u.post_norm, &u.inner_norm})
      if (!n->empty()) p += norm(d);
    if (!u.mid_norm.empty()) p += norm(ff);
    if (u.qkv_norm) p += 3 * norm(d / h);  // HybridNorm's q/k/v norms, width d/h
    if (!u.head_scale.empty()) p += h;
    if (!u.skip_param.empty()) p += d;
    if (u.gate) p += 1;
  }
  return p;
}

}  // namespace

double body_parameter_count(const ModelConfig& cfg) {
  const Placement& pl = find_placement(cfg.placement);
  const Index L = cfg.layers;
  // Blocks differ only in a scheme like mix (Post-LN blocks below, Pre-LN above): the largest of the first, a
  // middle and the last block bounds them all without walking a billion layers.
  double per_block = 0;
  for (Index l : {Index{0}, L / 2, L - 1}) per_block = std::max(per_block, block_parameters(cfg, pl.block(cfg, l)));
  return static_cast<double>(L) * per_block + 2 * static_cast<double>(cfg.d_model) + 1;  // + the final norm
}

Index state_streams(const ModelConfig& cfg) {
  const std::vector<UnitSpec> units = find_placement(cfg.placement).block(cfg, 0);
  return !units.empty() && units.front().dual_stream ? 2 : 1;
}

double trace_doubles(const ModelConfig& cfg, Index n_tokens) {
  const double n = static_cast<double>(n_tokens), d = static_cast<double>(cfg.d_model);
  const double ff = static_cast<double>(cfg.ff()), h = static_cast<double>(cfg.heads);
  const double L = static_cast<double>(cfg.layers);
  // per block: h (n, n) attention probabilities, ~12 (n, d) activations and norm caches, 3 (n, d_ff) FFN
  // activations (a gated one keeps the same three: its product, act(z1) and z3·act'(z1)); and dL/dx_l for
  // l = 0..L (two streams: x_l and dL/dx_l are (n, 2d), the second stream extra)
  const double s = static_cast<double>(state_streams(cfg));
  const double per_head = cfg.attn_softcap > 0 ? 2 : 1;  // a soft-cap keeps its slope beside each head's P
  return L * (per_head * h * n * n + 12 * n * d + 3 * n * ff) + (L + 1) * n * d + (s - 1) * 2 * (L + 1) * n * d;
}

MemoryEstimate checkpoint_load_memory(const CheckpointLoad& load) {
  MemoryEstimate m;
  m.add("its block-stack tensors in double", load.block_values * sizeof(double));
  if (load.embedding_values > 0) m.add("its embeddings in double (--token-ids)", load.embedding_values * sizeof(double));
  m.add("one tensor being built and the read buffer", load.peak_bytes() - load.kept_bytes());
  return m;
}

MemoryEstimate& add_checkpoint_kept(MemoryEstimate& m, double checkpoint_bytes) {
  if (checkpoint_bytes > 0) m.add("the checkpoint read (kept beside the model's copy)", checkpoint_bytes);
  return m;
}

void require_memory(const MemoryEstimate& need, double budget_bytes, const std::string& command, const std::string& fix) {
  const double budget = memory_budget(budget_bytes);
  require(need.total() <= budget, command + " needs " + need.describe() + ", more than the " + format_bytes(budget) +
                                      " allowed (--max-memory" + (budget_bytes > 0 ? "" : ", default half of RAM") +
                                      "); fix: " + fix);
}

namespace {
// N: the state's size n·width (two streams: 2n·d), the side of B_l
double state_size(const ModelConfig& cfg, Index n_tokens) {
  return static_cast<double>(n_tokens) * static_cast<double>(cfg.d_model * state_streams(cfg));
}
}  // namespace

double explicit_device_bytes(const ModelConfig& cfg, Index n_tokens) {
  const double N = state_size(cfg, n_tokens);
  return 5.0 * N * N * sizeof(double);
}

MemoryEstimate explicit_memory(const ModelConfig& cfg, Index n_tokens, BackendKind backend) {
  // N: the state's size n·width (two streams: 2n·d; B_l is N × N, P_l is N/2 × N, so this bounds it from above)
  const double N = state_size(cfg, n_tokens);
  MemoryEstimate m;
  if (backend == BackendKind::Cpu) {
    // live (N, N) matrices: P, B (dense + structured copy), the product's result, the SVD's copy and workspace;
    // jacobian-norms instead holds copies of B_l and P_l for two layers at once (4 plus P and B_l: 6; more layers
    // at once only within the budget: explicit_concurrent_layers)
    m.add("explicit Jacobians", 7.0 * N * N * sizeof(double));
  } else {
    // the host builds each B_l (the attention sublayer's dense Jacobian, composed in place with the token-wise
    // factors) and hands it to the device; P_l, the products and the norms' copies stay there
    m.add("B_l built on the host", 2.0 * N * N * sizeof(double));
  }
  m.add("parameters", body_parameter_count(cfg) * sizeof(double));
  m.add("forward trace", trace_doubles(cfg, n_tokens) * sizeof(double));
  return m;
}

MemoryEstimate streaming_memory(const ModelConfig& cfg, Index n_tokens, Index probes, bool weights_per_block) {
  const double n = static_cast<double>(n_tokens), d = static_cast<double>(cfg.d_model);
  const double ff = static_cast<double>(cfg.ff()), h = static_cast<double>(cfg.heads);
  const double k = static_cast<double>(std::max<Index>(probes, 1));
  const double params = body_parameter_count(cfg);
  MemoryEstimate m;
  // the parameters (or one block's: weights_per_block), and one block's parameter gradients (analyze frees each
  // block's after taking their norms)
  const double per_block = params / static_cast<double>(std::max<Index>(cfg.layers, 1));
  m.add("parameters", ((weights_per_block ? per_block : params) + per_block) * sizeof(double));
  m.add("forward trace", trace_doubles(cfg, n_tokens) * sizeof(double));
  // transient per-head (n, n) products of the backward pass; k stacked probes through the widest sublayer
  m.add("probes and backward transients", (4 * h * n * n + 6 * k * n * (d + ff)) * sizeof(double));
  return m;
}

void add_precision_memory(MemoryEstimate& m, const ModelConfig& cfg, Index n_tokens, bool weights_per_block) {
  const double params = body_parameter_count(cfg);
  const double per_block = params / static_cast<double>(std::max<Index>(cfg.layers, 1));
  // the float64 run keeps its parameter gradients for the comparison; the low-precision model has parameters (or one
  // block's), one block's gradients and a trace of its own
  m.add("float64 parameter gradients kept for the comparison", params * sizeof(double));
  m.add("the low-precision model", ((weights_per_block ? per_block : params) + per_block) * sizeof(double));
  m.add("the low-precision forward trace", trace_doubles(cfg, n_tokens) * sizeof(double));
}

MemoryEstimate streamed_memory(const ModelConfig& cfg, Index n_tokens, Index rows) {
  const Index N = n_tokens * cfg.d_model * state_streams(cfg);  // the state's size (a row of P_l or B_l)
  const Index k = std::max<Index>(1, std::min(rows, N));
  MemoryEstimate m = streaming_memory(cfg, n_tokens, k);  // trace, parameters, k cotangents through a sublayer
  // the identity chunk, its image under P_l and under B_l, each (k·n, d)
  m.add("identity chunk and its images", 3.0 * static_cast<double>(k) * static_cast<double>(N) * sizeof(double));
  return m;
}

int explicit_concurrent_layers(const ModelConfig& cfg, Index n_tokens, double budget_bytes, int threads) {
  threads = std::max(threads, 1);
  if (threads <= kExplicitConcurrentLayers || omp_in_parallel()) return std::min(threads, kExplicitConcurrentLayers);
  const double N = state_size(cfg, n_tokens);
  const double spare = memory_budget(budget_bytes) - explicit_memory_estimate(cfg, n_tokens);
  const double more = spare > 0 ? std::floor(spare / (2.0 * N * N * sizeof(double))) : 0.0;
  return static_cast<int>(std::min(static_cast<double>(threads), kExplicitConcurrentLayers + more));
}

double explicit_memory_estimate(const ModelConfig& cfg, Index n_tokens) { return explicit_memory(cfg, n_tokens).total(); }

double streaming_memory_estimate(const ModelConfig& cfg, Index n_tokens, Index probes) {
  return streaming_memory(cfg, n_tokens, probes).total();
}

}  // namespace gradflow
