// format_bytes.cpp — see format_bytes.hpp.
#include "gradflow/core/format_bytes.hpp"

#include <cstdio>

namespace gradflow {

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 6) { bytes /= 1024.0; ++u; }
  char buf[64];
  // three significant digits, but never an exponent: 1000-1023 of a unit print whole ("1000 MiB", not "1e+03 MiB")
  std::snprintf(buf, sizeof buf, bytes >= 999.5 ? "%.0f %s" : "%.3g %s", bytes, units[u]);
  return buf;
}

}  // namespace gradflow
