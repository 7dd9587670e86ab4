// format_bytes.hpp — a size in bytes as people read it ("1.5 GiB"), for every message that names memory: the
// memory estimates of run/, the device memory checks of backend/cuda/ (which is why it lives in core, below both).
#pragma once
#include <string>

namespace gradflow {

// Three significant digits in the largest binary unit that keeps the number at least 1: "512 B", "1.5 GiB",
// "1000 MiB" (never an exponent).
std::string format_bytes(double bytes);

}  // namespace gradflow
