// engine.cpp — the engine decision, the memory estimates it rests on, and the --spectral-layers list (engine.hpp).
#include "gradflow/run/engine.hpp"

#include <algorithm>
#include <sstream>

#include "gradflow/core/error.hpp"

namespace gradflow {

EngineChoice choose_engine(const ModelConfig& cfg, const AnalysisOptions& opts) {
  require(opts.seq_len > 0, "--seq-len must be positive (got " + std::to_string(opts.seq_len) +
                                "); fix: e.g. --seq-len 16");
  require(opts.top_k >= 1, "--top-k " + std::to_string(opts.top_k) + " must be at least 1; fix: e.g. --top-k 3");
  require(opts.hutchinson_probes >= 0, "--hutchinson-probes " + std::to_string(opts.hutchinson_probes) +
                                           " is negative; fix: e.g. --hutchinson-probes 32 (0 skips the estimates)");
  parse_spectral_layers(opts.spectral_layers, cfg.layers);
  require(!(opts.spectrum && opts.engine_request == EngineRequest::MatrixFree),
          "--spectrum needs the full spectra of explicit mode; fix: drop --spectrum or use --mode explicit/auto");
  EngineChoice c;
  c.explicit_bytes = explicit_memory_estimate(cfg, opts.seq_len);
  c.budget_bytes = opts.max_memory_bytes > 0 ? opts.max_memory_bytes : default_max_memory();
  const std::string sizes = "explicit Jacobians need about " + format_bytes(c.explicit_bytes) + ", the budget (--max-memory" +
                            std::string(opts.max_memory_bytes > 0 ? "" : ", default half of RAM") + ") is " +
                            format_bytes(c.budget_bytes);
  switch (opts.engine_request) {
    case EngineRequest::GradientsOnly:
      c.engine = Engine::GradientsOnly;
      c.reason = "--gradients-only: exact gradient norms from one backward pass, no Jacobians";
      break;
    case EngineRequest::Explicit:
      c.engine = Engine::Explicit;
      c.reason = "--mode explicit (" + sizes + ")";
      break;
    case EngineRequest::MatrixFree:
      c.engine = Engine::MatrixFree;
      c.reason = "--mode matrix-free (" + sizes + ")";
      break;
    case EngineRequest::Auto: {
      const bool fits = c.explicit_bytes <= c.budget_bytes;
      c.engine = fits ? Engine::Explicit : Engine::MatrixFree;
      c.reason = "--mode auto: " + sizes + (fits ? ", so explicit" : ", so matrix-free");
      break;
    }
  }
  if (c.engine == Engine::Explicit) {
    require(c.explicit_bytes <= c.budget_bytes,
            "explicit Jacobians of (n*d)^2 = (" + std::to_string(opts.seq_len * cfg.d_model) + ")^2 entries need about " +
                format_bytes(c.explicit_bytes) + ", more than the " + format_bytes(c.budget_bytes) +
                " allowed; fix: lower --seq-len or --d-model, or raise --max-memory");
  } else {
    const Index probes = c.engine == Engine::MatrixFree ? opts.hutchinson_probes : 0;
    const double need = streaming_memory_estimate(cfg, opts.seq_len, probes);
    require(need <= c.budget_bytes, std::string(to_string(c.engine)) + " mode keeps " + std::to_string(cfg.heads) +
                                        " attention matrices of (" + std::to_string(opts.seq_len) +
                                        ")^2 entries per layer and needs about " + format_bytes(need) + ", more than the " +
                                        format_bytes(c.budget_bytes) +
                                        " allowed; fix: lower --seq-len or --layers, or raise --max-memory");
  }
  return c;
}

double explicit_memory_estimate(const ModelConfig& cfg, Index n_tokens) {
  const double N = static_cast<double>(n_tokens) * static_cast<double>(cfg.d_model);
  // live (N, N) matrices: P, B (dense + structured copy), the product's result, the SVD's copy and workspace
  return 7.0 * N * N * sizeof(double);
}

double streaming_memory_estimate(const ModelConfig& cfg, Index n_tokens, Index probes) {
  const double n = static_cast<double>(n_tokens), d = static_cast<double>(cfg.d_model);
  const double ff = static_cast<double>(cfg.ff()), h = static_cast<double>(cfg.heads);
  const double L = static_cast<double>(cfg.layers), k = static_cast<double>(std::max<Index>(probes, 1));
  // per block, the forward trace: h (n, n) attention probabilities, ~12 (n, d) activations and norm caches,
  // 3 (n, d_ff) FFN activations; the gradients dL/dx_l; the parameters, and one block's parameter gradients
  // (analyze frees each block's after taking their norms); transient per-head (n, n) products of the backward
  // pass; k stacked probes through the widest sublayer.
  const double block_params = 4 * d * d + 2 * d * ff;
  const double doubles = L * (h * n * n + 12 * n * d + 3 * n * ff) + (L + 1) * n * d + (L + 1) * block_params +
                         4 * h * n * n + 6 * k * n * (d + ff);
  return doubles * sizeof(double);
}

std::vector<Index> parse_spectral_layers(const std::string& text, Index layers) {
  std::vector<Index> out;
  if (text == "none") return out;
  if (text == "all") {
    for (Index l = 0; l < layers; ++l) out.push_back(l);
    return out;
  }
  if (text == "bottom") return {0};
  if (text == "top") return {layers - 1};
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t pos = 0;
    long long v = -1;
    try {
      v = std::stoll(item, &pos);
    } catch (const std::exception&) {
      pos = 0;
    }
    require(pos > 0 && pos == item.size() && v >= 0 && v < layers,
            "--spectral-layers '" + text + "': '" + item + "' is not a layer in 0.." + std::to_string(layers - 1) +
                "; fix: use all, none, bottom, top or indices like 0,6,12");
    out.push_back(static_cast<Index>(v));
  }
  require(!out.empty(), "--spectral-layers '" + text + "' names no layer; fix: use all, none, bottom, top or 0,6,12");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace gradflow
