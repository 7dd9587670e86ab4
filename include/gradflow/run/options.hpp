// options.hpp — options of an analysis run that are not part of the model (CLI flags in comments).
#pragma once
#include <cstdint>
#include <string>

#include "gradflow/backend/backend.hpp"
#include "gradflow/core/types.hpp"
#include "gradflow/kernels/precision.hpp"

namespace gradflow {

// The engine an analysis runs (engine.hpp chooses it):
//   Explicit       dense (N, N) Jacobians B_l and P_l (N = n·d), exact norms and SVDs
//   MatrixFree     JVP/VJP operators only: Lanczos for top singular values, Hutchinson for Frobenius norms
//   GradientsOnly  one forward and one backward pass: exact gradient norms, no Jacobians
//   Streamed       exact Frobenius norms of B_l and P_l from chunks of identity rows through the VJP chain
//                  (matrix_free/streamed.hpp): no (N, N) matrix; auto chooses it when explicit does not fit in
//                  --max-memory and its estimated time fits --max-time (engine.hpp)
enum class Engine { Explicit, MatrixFree, GradientsOnly, Streamed };
// What was asked for: --mode auto | explicit | matrix-free | streamed, or --gradients-only (which wins over --mode).
enum class EngineRequest { Auto, Explicit, MatrixFree, GradientsOnly, Streamed };
const char* to_string(Engine e);          // "explicit" | "matrix-free" | "gradients-only" | "streamed" (config.mode)
const char* to_string(EngineRequest r);   // "auto" | "explicit" | "matrix-free" | "gradients-only" | "streamed"
// --mode TEXT (auto | explicit | matrix-free | streamed), or GradientsOnly when gradients_only; Error for an unknown mode.
EngineRequest parse_engine_request(const std::string& mode, bool gradients_only);

// The most --sensitivity-probes and --hutchinson-probes a run takes (each probe costs one or two passes; a million
// probes of a small model would run for hours without a better answer than a thousand give).
inline constexpr Index kMaxProbes = 100000;

// analyze --plan: one task's share of a streamed or matrix-free run split across processes
// (commands/analyze_plan.hpp). The default is the whole run; a part reports the sums its chunks add (the report's
// "streamed_partial" or "hutchinson_partial"), and the plan's merge adds every part's in the order one process adds
// them. Matrix-free mode's Lanczos singular values are one task of their own: a part with lanczos runs them.
struct RunPart {
  Index chunk_begin = 0, chunk_end = -1;  // chunks [begin, end) of --stream-rows identity rows (streamed) or of
                                          // --probe-chunk Hutchinson probes (matrix-free); −1: to the last
  bool lanczos = true;                    // matrix-free: this part computes the Lanczos singular values
  bool whole() const { return chunk_begin == 0 && chunk_end < 0 && lanczos; }
};

struct AnalysisOptions {
  Index seq_len = 16;               // --seq-len n (tokens of the random input)
  std::string loss = "dot";         // --loss dot (L = Σ g ⊙ y, g seeded N(0,1)) | half-sq (L = ½ Σ y²)
  double max_memory_bytes = 0;      // --max-memory; 0 => half of physical memory
  bool progress = true;             // progress lines on stderr for long runs
  double checkpoint_bytes = 0;      // what the --weights checkpoint read keeps for the whole run (its tensors and
                                    // embeddings in double, beside the model's copy): counted by every memory guard
  EngineRequest engine_request = EngineRequest::Auto;  // --mode / --gradients-only
  Engine engine = Engine::Explicit;  // the engine that runs: analyze() sets it from choose_engine (engine.hpp)
  BackendKind backend = BackendKind::Cpu;  // --device: where the engine's dense linear algebra runs; the run's one
                                           // backend is built from it (backend/backend.hpp: RunBackend)
  bool weights_per_block = true;    // a gradients-only run that can (engine.hpp: weights_per_block) holds its weight
                                    // matrices one block at a time; false: all of them (tests: the same report)
  bool keep_param_grads = true;     // AnalysisContext::grads holds every parameter gradient (false: only their
                                    // norms, computed block by block, so the gradients are never resident at once)
  bool spectrum = false;            // --spectrum: full singular value spectra of B_l and P_l (explicit engine)
  Index top_k = 1;                  // --top-k: singular values per operator in matrix-free mode
  std::string spectral_layers = "all";  // --spectral-layers all | none | bottom | top | 0,6,12
  Index hutchinson_probes = 32;     // --hutchinson-probes K (0: no Frobenius estimates)
  Index probe_chunk = 64;           // --probe-chunk C: Hutchinson probes pushed down together (memory ~C·N; the
                                    // estimate's standard error uses the pairs within a chunk: hutchinson.hpp)
  Index stream_rows = 256;          // --stream-rows K: identity rows per chunk of streamed mode (>= 1; memory ~K·N)
  bool stream_blocks = true;        // --stream-blocks on|off: streamed mode also gives ‖B_l‖_F (as much work again)
  bool kernel_chain = false;        // streamed mode through the kernels' chain (matrix_free/device_chain.hpp) even on
                                    // the CPU backend (tests: the device path end to end); a device backend always is
  Index sensitivity_probes = 0;     // --sensitivity-probes K: output sensitivity to parameters (0: off; each probe
                                    // costs about two forward passes: a parameter JVP and a perturbed forward)
  double sensitivity_size = 1e-3;   // --sensitivity-size r: δ_i = r·|θ_i|·ξ_i, ξ_i ~ N(0, 1) per parameter entry
  double max_time_seconds = 600;    // --max-time: auto chooses streamed mode only when its estimate fits this
  RunPart part;                     // analyze --plan's tasks: a share of the streamed or matrix-free run
  uint64_t probe_seed = 0;          // random probes of matrix-free mode (analyze() sets it from --seed)
  Precision precision = Precision::F64;  // --precision: the gradients also at this emulated precision, measured
                                         // against float64's (run/precision_compare.hpp; gradients-only engine)
  bool autocast = false;            // --autocast bf16|f16: `precision` in autocast's regime (float32 master weights
                                    // and stream, matrix products in the type) rather than the model cast to it
  LossScale loss_scale;             // --loss-scale S | dynamic (the low-precision backward pass's cotangent × S)
};

// The option that set `precision`, for messages: "--autocast" or "--precision".
inline std::string precision_option(const AnalysisOptions& o) { return o.autocast ? "--autocast" : "--precision"; }

// Parses sizes like "512M", "8G", "1.5G", "1048576" (bytes); Error on anything else.
double parse_memory_size(const std::string& text, const std::string& option);
// Half of this machine's physical memory, in bytes.
double default_max_memory();
// The memory budget in bytes: --max-memory as given (max_memory_bytes > 0), else default_max_memory().
double memory_budget(double max_memory_bytes);

}  // namespace gradflow
