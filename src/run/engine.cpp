// engine.cpp — the engine decision, the memory estimates it rests on, and the --spectral-layers list (engine.hpp).
#include "gradflow/run/engine.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "gradflow/backend/backend.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/run/memory_estimate.hpp"
#include "gradflow/run/time_estimate.hpp"

namespace gradflow {

EngineChoice choose_engine(const ModelConfig& cfg, const AnalysisOptions& opts) {
  require(opts.seq_len > 0, "--seq-len must be positive (got " + std::to_string(opts.seq_len) +
                                "); fix: e.g. --seq-len 16");
  require(opts.top_k >= 1, "--top-k " + std::to_string(opts.top_k) + " must be at least 1; fix: e.g. --top-k 3");
  require(opts.hutchinson_probes >= 0, "--hutchinson-probes " + std::to_string(opts.hutchinson_probes) +
                                           " is negative; fix: e.g. --hutchinson-probes 32 (0 skips the estimates)");
  if (opts.spectral_layers != "all") parse_spectral_layers(opts.spectral_layers, cfg.layers);  // "all": L indices
  require(opts.sensitivity_probes >= 0, "--sensitivity-probes " + std::to_string(opts.sensitivity_probes) +
                                            " is negative; fix: e.g. --sensitivity-probes 16 (0 skips the estimate)");
  require(std::isfinite(opts.sensitivity_size) && opts.sensitivity_size > 0,
          "--sensitivity-size must be a positive finite number; fix: e.g. --sensitivity-size 1e-3");
  require(opts.stream_rows >= 1, "--stream-rows " + std::to_string(opts.stream_rows) +
                                     " must be at least 1; fix: e.g. --stream-rows 256 (memory grows like K*n*(d+d_ff))");
  require(opts.max_time_seconds > 0, "--max-time must be positive; fix: e.g. --max-time 10m");
  require(!(opts.spectrum && (opts.engine_request == EngineRequest::MatrixFree ||
                              opts.engine_request == EngineRequest::Streamed)),
          "--spectrum needs the full spectra of explicit mode; fix: drop --spectrum or use --mode explicit/auto");
  EngineChoice c;
  MemoryEstimate explicit_need = explicit_memory(cfg, opts.seq_len, opts.backend);
  add_checkpoint_kept(explicit_need, opts.checkpoint_bytes);
  c.explicit_bytes = explicit_need.total();
  c.budget_bytes = memory_budget(opts.max_memory_bytes);
  const std::string sizes = "explicit mode needs about " + format_bytes(c.explicit_bytes) + ", the budget (--max-memory" +
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
    case EngineRequest::Streamed:
      c.engine = Engine::Streamed;
      c.reason = "--mode streamed: exact Frobenius norms from " + std::to_string(opts.stream_rows) +
                 " identity rows at a time, no (N, N) matrix (" + sizes + ")";
      break;
    case EngineRequest::Auto: {
      std::string device_sizes;  // with a device: what the walk needs there and what it has free
      bool device_fits = true;
      if (c.explicit_bytes <= c.budget_bytes && opts.backend != BackendKind::Cpu) {
        const std::string dev = to_string(opts.backend);
        const double need = explicit_device_bytes(cfg, opts.seq_len);
        try {
          const double free_bytes = make_backend(opts.backend)->free_memory();
          device_fits = need <= free_bytes;
          device_sizes = "; on the " + dev + " device its products need about " + format_bytes(need) +
                         " (5 matrices of N^2), " + format_bytes(free_bytes) + " are free";
        } catch (const Error&) {  // no device here (a plan written on a login node): the run asks again on its node
          device_sizes = "; the " + dev + " device's free memory could not be asked here";
        }
      }
      if (c.explicit_bytes <= c.budget_bytes && device_fits) {
        c.engine = Engine::Explicit;
        c.reason = "--mode auto: " + sizes + device_sizes + ", so explicit";
        break;
      }
      // explicit does not fit: streamed gives exact Frobenius norms when its memory and estimated time fit
      const double streamed_bytes = streamed_memory(cfg, opts.seq_len, opts.stream_rows).total();
      c.streamed_considered = true;
      std::string rate_of = opts.backend == BackendKind::Cpu ? "here" : "on the " + std::string(to_string(opts.backend));
      try {
        c.dgemm_rate = measured_dgemm_rate(opts.backend);  // the device's with --device cuda: it runs the chain
      } catch (const Error&) {  // no device here (a plan written on a login node): the run estimates again there
        c.dgemm_rate = measured_dgemm_rate();
        rate_of = "here, the " + std::string(to_string(opts.backend)) + " device's could not be measured";
      }
      c.streamed_seconds = streamed_seconds_estimate(cfg, opts.seq_len, c.dgemm_rate, opts.stream_blocks);
      const bool time_fits = c.streamed_seconds <= opts.max_time_seconds;
      const bool memory_fits = streamed_bytes <= c.budget_bytes;
      c.engine = time_fits && memory_fits ? Engine::Streamed : Engine::MatrixFree;
      char rate[32];
      std::snprintf(rate, sizeof rate, "%.3g", c.dgemm_rate / 1e9);
      c.reason = "--mode auto: " + sizes + device_sizes + "; streamed mode (exact Frobenius norms) is estimated at " +
                 format_seconds(c.streamed_seconds) + " (" + rate + " GFLOP/s DGEMM measured " + rate_of + "), " +
                 (time_fits ? "within" : "over") + " --max-time " + format_seconds(opts.max_time_seconds) +
                 (memory_fits ? "" : ", and needs " + format_bytes(streamed_bytes)) +
                 (c.engine == Engine::Streamed ? ", so streamed" : ", so matrix-free");
      break;
    }
  }
  require(opts.backend == BackendKind::Cpu || c.engine != Engine::GradientsOnly,
          "--device " + std::string(to_string(opts.backend)) + " runs the Jacobian products of explicit, streamed and "
              "matrix-free mode, not " + to_string(c.engine) + " mode (" + c.reason +
              "); fix: drop --gradients-only or --device");
  if (c.engine == Engine::Explicit) {
    require_memory(explicit_need, opts.max_memory_bytes,
                   "explicit mode (Jacobians of (n*d)^2 = (" + std::to_string(opts.seq_len * cfg.d_model) + ")^2 entries)",
                   "lower --seq-len or --d-model (or --layers when the parameters or trace dominate), or raise "
                   "--max-memory (analyze: or use --mode matrix-free)");
  } else if (c.engine == Engine::Streamed) {
    MemoryEstimate need = streamed_memory(cfg, opts.seq_len, opts.stream_rows);
    require_memory(add_checkpoint_kept(need, opts.checkpoint_bytes), opts.max_memory_bytes, "streamed mode",
                   "lower --stream-rows (the chunks grow like K*n*(d+d_ff)) or --layers/--seq-len "
                   "(the forward trace), or raise --max-memory");
  } else {
    const Index probes = c.engine == Engine::MatrixFree ? opts.hutchinson_probes : 0;
    MemoryEstimate need = streaming_memory(cfg, opts.seq_len, probes);
    require_memory(add_checkpoint_kept(need, opts.checkpoint_bytes), opts.max_memory_bytes,
                   std::string(to_string(c.engine)) + " mode",
                   "lower --layers or --seq-len (the trace keeps " + std::to_string(cfg.heads) + " attention matrices of (" +
                       std::to_string(opts.seq_len) + ")^2 entries per layer), or raise --max-memory");
  }
  return c;
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

MemoryEstimate streaming_memory(const ModelConfig& cfg, Index n_tokens, Index probes) {
  const double n = static_cast<double>(n_tokens), d = static_cast<double>(cfg.d_model);
  const double ff = static_cast<double>(cfg.ff()), h = static_cast<double>(cfg.heads);
  const double k = static_cast<double>(std::max<Index>(probes, 1));
  const double params = body_parameter_count(cfg);
  MemoryEstimate m;
  // the parameters, and one block's parameter gradients (analyze frees each block's after taking their norms)
  m.add("parameters", (params + params / static_cast<double>(std::max<Index>(cfg.layers, 1))) * sizeof(double));
  m.add("forward trace", trace_doubles(cfg, n_tokens) * sizeof(double));
  // transient per-head (n, n) products of the backward pass; k stacked probes through the widest sublayer
  m.add("probes and backward transients", (4 * h * n * n + 6 * k * n * (d + ff)) * sizeof(double));
  return m;
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
