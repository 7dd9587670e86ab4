// csv.hpp — a matrix as CSV: one line per row, values separated by ',', full precision (%.17g, so
// every double reads back bit-exact). No header line. Written atomically like every gradflow output.
#pragma once
#include <string>

#include "gradflow/core/types.hpp"

namespace gradflow {

// Throws Error "cannot write 'path': <strerror>; fix: choose a writable path".
void write_csv(const std::string& path, const Mat& m);

}  // namespace gradflow
