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
};

// Parses sizes like "512M", "8G", "1.5G", "1048576" (bytes); Error on anything else.
double parse_memory_size(const std::string& text, const std::string& option);
// Half of this machine's physical memory, in bytes.
double default_max_memory();
std::string format_bytes(double bytes);

}  // namespace gradflow
