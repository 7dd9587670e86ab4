// max_threads.hpp — the most OpenMP threads gradflow runs (--threads, OMP_NUM_THREADS), for the library's checks
// of --threads and the programs' start-up check (src/process/runtime_env.hpp). Depends on nothing.
#pragma once

namespace gradflow {

// Beyond it libgomp fails to create them (exit 1 at 40000) or crashes (SIGSEGV at 100000); no machine gradflow
// targets has more cores.
inline constexpr int kMaxThreads = 1024;

}  // namespace gradflow
