// options.hpp — options of an analysis run that are not part of the model (CLI flags in comments).
#pragma once
#include <cstdint>
#include <string>

#include "gradflow/types.hpp"

namespace gradflow {

struct AnalysisOptions {
  Index seq_len = 16;               // --seq-len n (tokens of the random input)
  std::string loss = "dot";         // --loss dot (L = Σ g ⊙ y, g seeded N(0,1)) | half-sq (L = ½ Σ y²)
  bool jacobians = true;            // explicit B_l and P_l (off: gradient norms only)
  double max_memory_bytes = 0;      // --max-memory; 0 => half of physical memory
  bool progress = true;             // progress lines on stderr for long runs
  // Engine (matrix_free/mode.hpp): --mode auto | explicit | matrix-free; resolved into jacobians/matrix_free.
  std::string mode = "auto";
  bool matrix_free = false;         // JVP/VJP operators instead of dense Jacobians
  bool keep_param_grads = true;     // AnalysisContext::grads holds every parameter gradient (false: only their
                                    // norms, computed block by block, so the gradients are never resident at once)
  bool spectrum = false;            // --spectrum: full singular value spectra of B_l and P_l (explicit mode)
  Index top_k = 1;                  // --top-k: singular values per operator in matrix-free mode
  std::string spectral_layers = "all";  // --spectral-layers all | none | bottom | top | 0,6,12
  Index hutchinson_probes = 32;     // --hutchinson-probes K (0: no Frobenius estimates)
  uint64_t probe_seed = 0;          // random probes of matrix-free mode (analyze() sets it from --seed)
};

// Parses sizes like "512M", "8G", "1.5G", "1048576" (bytes); Error on anything else.
double parse_memory_size(const std::string& text, const std::string& option);
// Half of this machine's physical memory, in bytes.
double default_max_memory();
std::string format_bytes(double bytes);

}  // namespace gradflow
