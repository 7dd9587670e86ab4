// mode.hpp — which engine `analyze` runs: explicit Jacobians (dense (N, N) matrices, N = n·d, exact SVDs)
// or matrix-free operators (JVP/VJP only: Lanczos for top singular values, Hutchinson for Frobenius norms).
// auto picks explicit when its estimated peak memory (context.hpp: explicit_memory_estimate, ~7·N²·8 bytes)
// fits in --max-memory, matrix-free above it. docs/scaling.md gives the costs of both.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gradflow/analysis/options.hpp"
#include "gradflow/model/config.hpp"

namespace gradflow {

struct ModeChoice {
  std::string mode;    // "explicit" | "matrix-free" | "gradients-only"
  std::string reason;  // one sentence for config.mode_reason
  double explicit_bytes = 0, budget_bytes = 0;
};

// Decides the mode for `opts.mode` ("auto" | "explicit" | "matrix-free") and `opts.jacobians`
// (false: --gradients-only). No allocation; the memory refusal is check_memory's (analyze.hpp).
// auto: explicit iff explicit_memory_estimate(cfg, n) <= budget (ties go to explicit).
// Error(BadInput) for a bad --mode, --top-k (< 1), --hutchinson-probes (< 0) or --spectral-layers.
ModeChoice choose_mode(const ModelConfig& cfg, const AnalysisOptions& opts);

// Applies a choice to the options the analyses read: jacobians (explicit) and matrix_free.
void apply_mode(const ModeChoice& choice, AnalysisOptions& opts);

// Writes config.mode, config.mode_reason and the options of the chosen mode into a report's config.
void add_mode_to_config(const ModeChoice& choice, const AnalysisOptions& opts, nlohmann::ordered_json& config);

// --spectral-layers: "all" | "none" | "bottom" | "top" | comma-separated indices "0,6,12" (each in 0..L-1).
// Returns the ascending, de-duplicated layer list; Error(BadInput) naming the option otherwise.
std::vector<Index> parse_spectral_layers(const std::string& text, Index layers);

}  // namespace gradflow
