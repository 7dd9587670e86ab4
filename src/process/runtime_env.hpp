// runtime_env.hpp — settings OpenMP and OpenBLAS read once, when they are loaded, and that gradflow chooses for
// the user unless the user chose them: short OpenMP spin-waits, and OpenBLAS kernels that match the CPU; and
// malloc settings that keep freed matrices' memory for reuse.
#pragma once
#include "gradflow/core/max_threads.hpp"  // kMaxThreads: the most threads --threads and OMP_NUM_THREADS may ask

namespace gradflow::process {

using gradflow::kMaxThreads;

// Exits with code 2 and a one-line message when OMP_NUM_THREADS asks for more than kMaxThreads threads (or is not
// a positive number list), before OpenMP starts any; tune_runtime_environment calls it first.
void check_thread_environment();

// Sets GOMP_SPINCOUNT=3000 unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set, and (OpenBLAS builds only)
// OPENBLAS_CORETYPE when OpenBLAS fell back to its generic SSE3 kernels on a CPU it does not know; if it set
// anything, runs gradflow again (execv of
// /proc/self/exe with the same arguments), once. The GOMP_SPINCOUNT re-execution normally happened already, before
// any library was initialized (an entry of the program's .preinit_array in runtime_env.cpp); this call re-executes
// only where OpenBLAS fell back, or where that early one failed. GRADFLOW_NO_TUNE=1 turns it off. Never fails: if the
// re-execution does not happen, gradflow carries on as it is. docs/benchmarks.md gives the measurements.
// Also calls tune_allocator().
void tune_runtime_environment(char** argv);

// malloc settings for programs that allocate many large matrices (src/process/runtime_env.cpp says why).
void tune_allocator();

}  // namespace gradflow::process
