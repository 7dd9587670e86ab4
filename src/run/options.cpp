// options.cpp — engine names, memory-size parsing and the default memory budget.
#include "gradflow/run/options.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdlib>

#include "gradflow/core/decimal.hpp"
#include "gradflow/core/error.hpp"

namespace gradflow {

const char* to_string(Engine e) {
  switch (e) {
    case Engine::Explicit: return "explicit";
    case Engine::MatrixFree: return "matrix-free";
    case Engine::GradientsOnly: return "gradients-only";
    case Engine::Streamed: return "streamed";
  }
  return "?";
}

const char* to_string(EngineRequest r) {
  switch (r) {
    case EngineRequest::Auto: return "auto";
    case EngineRequest::Explicit: return "explicit";
    case EngineRequest::MatrixFree: return "matrix-free";
    case EngineRequest::GradientsOnly: return "gradients-only";
    case EngineRequest::Streamed: return "streamed";
  }
  return "?";
}

EngineRequest parse_engine_request(const std::string& mode, bool gradients_only) {
  if (gradients_only) return EngineRequest::GradientsOnly;
  if (mode == "auto") return EngineRequest::Auto;
  if (mode == "explicit") return EngineRequest::Explicit;
  if (mode == "matrix-free") return EngineRequest::MatrixFree;
  if (mode == "streamed") return EngineRequest::Streamed;
  throw Error("--mode '" + mode + "' is not a mode; fix: use --mode explicit, matrix-free, streamed or auto");
}

double parse_memory_size(const std::string& text, const std::string& option) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  double mult = 1;
  const std::string suffix(end ? end : "");
  if (suffix == "" || suffix == "B") mult = 1;
  else if (suffix == "K" || suffix == "k") mult = 1024.0;
  else if (suffix == "M") mult = 1024.0 * 1024;
  else if (suffix == "G") mult = 1024.0 * 1024 * 1024;
  else if (suffix == "T") mult = 1024.0 * 1024 * 1024 * 1024;
  else mult = -1;
  const std::string number = text.substr(0, text.size() - suffix.size());
  require(end == text.c_str() || is_decimal_number(number, false),
          option + " " + not_decimal(number) + "; fix: e.g. " + option + " 512M or " + option + " 8G");
  require(end != text.c_str() && mult > 0 && std::isfinite(v) && v > 0,
          option + " '" + text + "' is not a size; fix: e.g. " + option + " 512M or " + option + " 8G");
  return v * mult;
}

double default_max_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 4.0 * 1024 * 1024 * 1024;
  return 0.5 * static_cast<double>(pages) * static_cast<double>(page);
}

double memory_budget(double max_memory_bytes) {
  return max_memory_bytes > 0 ? max_memory_bytes : default_max_memory();
}

}  // namespace gradflow
