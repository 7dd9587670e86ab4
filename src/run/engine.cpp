// engine.cpp — the engine decision (its memory estimates: memory_estimate.cpp) and the --spectral-layers list
// (engine.hpp).
#include "gradflow/run/engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "gradflow/backend/backend.hpp"
#include "gradflow/core/error.hpp"
#include "gradflow/core/format_bytes.hpp"
#include "gradflow/model/placement.hpp"
#include "gradflow/run/memory_estimate.hpp"
#include "gradflow/run/time_estimate.hpp"

namespace gradflow {

bool weights_per_block(const ModelConfig& cfg, const AnalysisOptions& opts, Engine engine, bool from_checkpoint) {
  return opts.weights_per_block && engine == Engine::GradientsOnly && opts.backend == BackendKind::Cpu &&
         !from_checkpoint && opts.sensitivity_probes == 0 && !find_placement(cfg.placement).profiles();
}

EngineChoice choose_engine(const ModelConfig& cfg, const AnalysisOptions& opts, const RunBackend& backend) {
  if (backend.kind() != opts.backend)
    throw Error("internal: the run's backend is not its --device", ErrorKind::Internal);
  require(opts.seq_len > 0, "--seq-len must be positive (got " + std::to_string(opts.seq_len) +
                                "); fix: e.g. --seq-len 16");
  require(opts.top_k >= 1, "--top-k " + std::to_string(opts.top_k) + " must be at least 1; fix: e.g. --top-k 3");
  require(opts.hutchinson_probes >= 0, "--hutchinson-probes " + std::to_string(opts.hutchinson_probes) +
                                           " is negative; fix: e.g. --hutchinson-probes 32 (0 skips the estimates)");
  if (opts.spectral_layers != "all") parse_spectral_layers(opts.spectral_layers, cfg.layers);  // "all": L indices
  require(opts.sensitivity_probes >= 0, "--sensitivity-probes " + std::to_string(opts.sensitivity_probes) +
                                            " is negative; fix: e.g. --sensitivity-probes 16 (0 skips the estimate)");
  // a count beyond any use (each probe costs two forward passes; the standard error falls like 1/sqrt(K)), and one
  // the command line's parser may have saturated from a larger number
  require(opts.sensitivity_probes <= kMaxProbes && opts.hutchinson_probes <= kMaxProbes,
          "--" + std::string(opts.sensitivity_probes > kMaxProbes ? "sensitivity" : "hutchinson") + "-probes " +
              std::to_string(std::max(opts.sensitivity_probes, opts.hutchinson_probes)) +
              " is more than " + std::to_string(kMaxProbes) + " probes; fix: e.g. 16 to 1000 probes (the standard "
              "error falls like 1/sqrt(K))");
  require(std::isfinite(opts.sensitivity_size) && opts.sensitivity_size > 0,
          "--sensitivity-size must be a positive finite number; fix: e.g. --sensitivity-size 1e-3");
  require(opts.probe_chunk >= 1, "--probe-chunk " + std::to_string(opts.probe_chunk) +
                                     " must be at least 1; fix: e.g. --probe-chunk 64 (memory grows like C*n*(d+d_ff))");
  require(opts.stream_rows >= 1, "--stream-rows " + std::to_string(opts.stream_rows) +
                                     " must be at least 1; fix: e.g. --stream-rows 256 (memory grows like K*n*(d+d_ff))");
  require(opts.max_time_seconds > 0, "--max-time must be positive; fix: e.g. --max-time 10m");
  require(!(opts.spectrum && (opts.engine_request == EngineRequest::MatrixFree ||
                              opts.engine_request == EngineRequest::Streamed)),
          "--spectrum needs the full spectra of explicit mode; fix: drop --spectrum or use --mode explicit/auto");
  const bool low_precision = opts.precision != Precision::F64;
  require(low_precision || (!opts.loss_scale.dynamic && opts.loss_scale.value == 1.0),
          "--loss-scale scales the backward pass of a --precision run; fix: add --precision f16 (or bf16, f32) or drop "
          "--loss-scale");
  if (low_precision) {
    const std::string flag = precision_option(opts), p = flag + " " + to_string(opts.precision);
    require(opts.engine_request == EngineRequest::Auto || opts.engine_request == EngineRequest::GradientsOnly,
            p + " measures the gradients only, not the Jacobians of --mode " + to_string(opts.engine_request) +
                "; fix: drop --mode (or use --gradients-only) or drop " + flag);
    require(backend.kind() == BackendKind::Cpu,
            p + " is emulated on the CPU, not on --device " + to_string(backend.kind()) + "; fix: drop --device");
  }
  EngineChoice c;
  MemoryEstimate explicit_need = explicit_memory(cfg, opts.seq_len, backend.kind());
  add_checkpoint_kept(explicit_need, opts.checkpoint_bytes);
  c.explicit_bytes = explicit_need.total();
  c.budget_bytes = memory_budget(opts.max_memory_bytes);
  const std::string sizes = "explicit mode needs about " + format_bytes(c.explicit_bytes) + ", the budget (--max-memory" +
                            std::string(opts.max_memory_bytes > 0 ? "" : ", default half of RAM") + ") is " +
                            format_bytes(c.budget_bytes);
  switch (low_precision ? EngineRequest::GradientsOnly : opts.engine_request) {
    case EngineRequest::GradientsOnly:
      c.engine = Engine::GradientsOnly;
      c.reason = low_precision ? precision_option(opts) + " " + to_string(opts.precision) +
                                     ": the gradients at that precision against float64's, one forward and backward "
                                     "pass each, no Jacobians"
                               : "--gradients-only: exact gradient norms from one backward pass, no Jacobians";
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
      if (c.explicit_bytes <= c.budget_bytes && backend.kind() != BackendKind::Cpu) {
        const std::string dev = to_string(backend.kind());
        const double need = explicit_device_bytes(cfg, opts.seq_len);
        try {
          const double free_bytes = backend.get()->free_memory();
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
      const std::string dev = to_string(backend.kind());
      std::string rate_of = backend.kind() == BackendKind::Cpu ? "here" : "on the " + dev;
      try {
        c.dgemm_rate = backend.get()->gemm_rate();  // the device's with --device cuda: it runs the chain
      } catch (const Error&) {  // no device here (a plan written on a login node): the run estimates again there
        c.dgemm_rate = host_dgemm_rate();
        rate_of = "here, the " + dev + " device's could not be measured";
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
  require(backend.kind() == BackendKind::Cpu || c.engine != Engine::GradientsOnly,
          "--device " + std::string(to_string(backend.kind())) +
              " runs the Jacobian products of explicit, streamed and matrix-free mode, not " + to_string(c.engine) +
              " mode (" + c.reason +
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
    // the probes pushed down at once: one chunk of --probe-chunk
    const Index probes = c.engine == Engine::MatrixFree ? std::min(opts.hutchinson_probes, opts.probe_chunk) : 0;
    // (a checkpoint's run: apply_file_sizes has set checkpoint_bytes)
    const bool per_block = weights_per_block(cfg, opts, c.engine, opts.checkpoint_bytes > 0);
    MemoryEstimate need = streaming_memory(cfg, opts.seq_len, probes, per_block);
    if (low_precision) add_precision_memory(need, cfg, opts.seq_len, per_block);
    require_memory(add_checkpoint_kept(need, opts.checkpoint_bytes), opts.max_memory_bytes,
                   std::string(to_string(c.engine)) + " mode",
                   "lower --layers or --seq-len (the trace keeps " + std::to_string(cfg.heads) + " attention matrices of (" +
                       std::to_string(opts.seq_len) + ")^2 entries per layer), or raise --max-memory");
  }
  return c;
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
