// mode.cpp — the explicit / matrix-free decision and the --spectral-layers list (see mode.hpp).
#include "gradflow/matrix_free/mode.hpp"

#include <algorithm>
#include <sstream>

#include "gradflow/analysis/context.hpp"
#include "gradflow/error.hpp"

namespace gradflow {

ModeChoice choose_mode(const ModelConfig& cfg, const AnalysisOptions& opts) {
  require(opts.top_k >= 1, "--top-k " + std::to_string(opts.top_k) + " must be at least 1; fix: e.g. --top-k 3");
  require(opts.hutchinson_probes >= 0, "--hutchinson-probes " + std::to_string(opts.hutchinson_probes) +
                                           " is negative; fix: e.g. --hutchinson-probes 32 (0 skips the estimates)");
  parse_spectral_layers(opts.spectral_layers, cfg.layers);
  ModeChoice c;
  c.explicit_bytes = explicit_memory_estimate(cfg, opts.seq_len);
  c.budget_bytes = opts.max_memory_bytes > 0 ? opts.max_memory_bytes : default_max_memory();
  const std::string sizes = "explicit Jacobians need about " + format_bytes(c.explicit_bytes) + ", the budget (--max-memory" +
                            std::string(opts.max_memory_bytes > 0 ? "" : ", default half of RAM") + ") is " +
                            format_bytes(c.budget_bytes);
  if (!opts.jacobians) {
    c.mode = "gradients-only";
    c.reason = "--gradients-only: exact gradient norms from one backward pass, no Jacobians";
  } else if (opts.mode == "explicit") {
    c.mode = "explicit";
    c.reason = "--mode explicit (" + sizes + ")";
  } else if (opts.mode == "matrix-free") {
    c.mode = "matrix-free";
    c.reason = "--mode matrix-free (" + sizes + ")";
  } else if (opts.mode == "auto") {
    const bool fits = c.explicit_bytes <= c.budget_bytes;
    c.mode = fits ? "explicit" : "matrix-free";
    c.reason = "--mode auto: " + sizes + (fits ? ", so explicit" : ", so matrix-free");
  } else {
    throw Error("--mode '" + opts.mode + "' is not a mode; fix: use --mode explicit, matrix-free or auto");
  }
  return c;
}

void apply_mode(const ModeChoice& choice, AnalysisOptions& opts) {
  opts.jacobians = choice.mode == "explicit";
  opts.matrix_free = choice.mode == "matrix-free";
}

void add_mode_to_config(const ModeChoice& choice, const AnalysisOptions& opts, nlohmann::ordered_json& config) {
  config["mode"] = choice.mode;
  config["mode_reason"] = choice.reason;
  config["explicit_memory_estimate_bytes"] = choice.explicit_bytes;
  config["max_memory_bytes"] = choice.budget_bytes;
  if (choice.mode == "explicit") config["spectrum"] = opts.spectrum;
  if (choice.mode == "matrix-free") {
    config["top_k"] = opts.top_k;
    config["spectral_layers"] = opts.spectral_layers;
    config["hutchinson_probes"] = opts.hutchinson_probes;
  }
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
