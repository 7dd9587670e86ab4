// fuzz_target.hpp — what every libFuzzer target of the readers shares: the input written to a private temporary
// file (the readers take paths, as the command line does), and the contract: a reader either returns or throws
// gradflow::Error; any other exception aborts, so libFuzzer records the input as a crash, as it does for every
// AddressSanitizer/UndefinedBehaviorSanitizer report.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "gradflow/core/error.hpp"

namespace gradflow::fuzz {

inline std::string input_file(const uint8_t* data, size_t size, const char* suffix) {
  static const std::string path = [suffix] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/gradflow-fuzz-" + std::to_string(::getpid()) + suffix;
  }();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

template <class F>
void expect_value_or_error(F&& read) {
  try {
    read();
  } catch (const gradflow::Error&) {  // a one-line refusal: the contract
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: not a gradflow::Error: %s\n", e.what());
    std::abort();
  }
}

}  // namespace gradflow::fuzz
