// backends.hpp — the backends every backend test body runs on (as ggml's test-backend-ops): the CPU backend, the
// reference, always; the CUDA backend when it was built, in TEST_CASEs tagged [cuda] (tests/CMakeLists.txt registers
// them with the label cuda and SKIP_RETURN_CODE 77: without a visible GPU they exit 77 and CTest says "Skipped",
// never "Passed"; run directly, without GRADFLOW_TEST_SKIP_CODE, they fail).
#pragma once
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "gradflow/backend/backend.hpp"
#include "gradflow/core/error.hpp"

namespace gradflow::test {

// make_backend(kind), or exit with GRADFLOW_TEST_SKIP_CODE when the backend was built but no GPU is visible.
inline std::unique_ptr<Backend> backend_or_skip(BackendKind kind) {
  try {
    return make_backend(kind);
  } catch (const Error& e) {
    const char* skip = std::getenv("GRADFLOW_TEST_SKIP_CODE");
    if (kind != BackendKind::Cpu && skip && std::string(e.what()).find("no CUDA GPU is visible") != std::string::npos) {
      std::cout << "SKIPPED: " << e.what() << std::endl;
      std::exit(std::atoi(skip));
    }
    throw;
  }
}

}  // namespace gradflow::test
