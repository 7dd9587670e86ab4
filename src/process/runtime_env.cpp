// runtime_env.cpp — see runtime_env.hpp.
//
// Why. (1) libgomp lets idle OpenMP threads spin 300 000 times before they sleep; on a 2-core machine that runs
// anything else the spinning threads take the cores from the working ones (`analyze --layers 6` 29 s instead of
// 3-5 s beside two busy processes). Sleeping at once (OMP_WAIT_POLICY=passive) fixes that but makes every one of
// the many short parallel regions pay a wake-up: 3x slower on an idle machine (20.5 s against 6.7 s for the
// headline run). A spin of 3000 iterations is as fast as spinning when idle and close to passive under load.
// (2) OpenBLAS 0.3.21 (Debian 12) picks kernels by CPU model and falls back to "Prescott" (SSE3) on models it
// does not know, such as newer Xeons: DGEMM then runs at a fifth of the AVX-512 rate. Both libraries read their
// environment variable once, when they are loaded, hence the re-execution. (3) glibc's malloc serves blocks above
// its mmap threshold with fresh pages from the kernel and returns them on free, so every new (N, N) matrix costs
// N²/512 page faults: a Post-LN block Jacobian at N = 2048 took 130 ms instead of 55 ms. A large top pad and trim
// threshold keep freed memory in the heap for the next matrix (resident memory then stays at its peak until exit).
// (4) Blocks above 32 MiB (an (N, N) matrix from N = 2048) were mapped on their own and returned on free, so each
// such product paid its page faults again; with no separate mappings they are reused from the heap like the rest.
// (Faulting memory in ahead as transparent huge pages, madvise(MADV_POPULATE_WRITE), was tried for issue 14: 11 ms
// instead of ~450 ms of CPU for 224 MiB when the kernel had huge pages at hand, 300-1800 ms when it had to compact
// memory first, on the loaded machine; not kept.)
// (5) Page faults were still a third of a full-scale gradients-only run (~1 GB of parameters, trace and gradients
// touched once: model_and_init 1.85 s of 3.9 s on the 2-core VM). glibc's tunable glibc.malloc.hugetlb=1 makes malloc
// ask for transparent huge pages (madvise) on its heap, 512 times fewer faults: the same run took 1.8-2.8 s,
// model_and_init 0.12-1.1 s (the slow case when the kernel first compacts memory). Like GOMP_SPINCOUNT it is read
// at start-up (by the dynamic loader), so it is set in the same re-execution; a GLIBC_TUNABLES of the user's wins.
#include "process/runtime_env.hpp"

#include <malloc.h>
#include <strings.h>
#include <unistd.h>

#include <alloca.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#ifdef GRADFLOW_HAVE_OPENBLAS
extern "C" char* openblas_get_corename(void);
#endif

namespace gradflow::process {
namespace {

// The OpenBLAS core to force when OpenBLAS chose its generic fallback, or nullptr to leave it alone.
const char* better_openblas_core() {
#if defined(GRADFLOW_HAVE_OPENBLAS) && (defined(__x86_64__) || defined(__i386__))  // the fallback is x86's
  const char* core = openblas_get_corename();
  if (core == nullptr || ::strcasecmp(core, "prescott") != 0) return nullptr;  // a known CPU: its own choice
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return nullptr;
}

constexpr const char* kSpinCount = "GOMP_SPINCOUNT=3000";
constexpr const char* kHugePages = "GLIBC_TUNABLES=glibc.malloc.hugetlb=1";  // transparent huge pages for the heap

// Whether envp holds NAME=... (prefix "NAME=").
const char* env_value(char** envp, const char* prefix) {
  const size_t len = std::strlen(prefix);
  for (char** e = envp; e != nullptr && *e != nullptr; ++e)
    if (std::strncmp(*e, prefix, len) == 0) return *e + len;
  return nullptr;
}

// The re-execution for GOMP_SPINCOUNT, done before any shared library is initialized: an entry of the executable's
// .preinit_array runs before the initializers of libgomp, OpenBLAS (which detects the CPU, allocates its buffers
// and starts its threads) and the C++ statics, so the first process costs only the loading. (libgomp reads
// GOMP_SPINCOUNT in its initializer; a setenv here would not reach it: libc's own initializer resets the
// environment to the original one.) OPENBLAS_CORETYPE still needs OpenBLAS loaded to tell whether it fell back,
// so tune_runtime_environment re-executes for it, on the CPUs where that happens.
void reexec_before_libraries(int, char** argv, char** envp) {
  const char* off = env_value(envp, "GRADFLOW_NO_TUNE=");
  if (off != nullptr && *off != '\0' && *off != '0') return;
  const bool spin = env_value(envp, "OMP_WAIT_POLICY=") == nullptr && env_value(envp, "GOMP_SPINCOUNT=") == nullptr;
  const bool tunables = env_value(envp, "GLIBC_TUNABLES=") == nullptr;
  if (!spin && !tunables) return;
  size_t count = 0;
  while (envp != nullptr && envp[count] != nullptr) ++count;
  char** env = static_cast<char**>(::alloca((count + 3) * sizeof(char*)));
  for (size_t i = 0; i < count; ++i) env[i] = envp[i];
  if (spin) env[count++] = const_cast<char*>(kSpinCount);
  if (tunables) env[count++] = const_cast<char*>(kHugePages);
  env[count] = nullptr;
  ::execve("/proc/self/exe", argv, env);  // returns only if it failed: tune_runtime_environment tries again
}

__attribute__((section(".preinit_array"), used)) void (*const preinit_entry)(int, char**, char**) =
    &reexec_before_libraries;

}  // namespace

void tune_allocator() {
  ::mallopt(M_MMAP_MAX, 0);             // every block from the heap, the largest matrices (>= 32 MiB) too ...
  ::mallopt(M_TOP_PAD, 256 << 20);       // grow the heap in large steps ...
  ::mallopt(M_TRIM_THRESHOLD, 1 << 30);  // ... and keep what is freed for the next matrix
}

void check_thread_environment() {
  const char* env = std::getenv("OMP_NUM_THREADS");
  if (env == nullptr || *env == '\0') return;
  // a list "8,2" gives the threads per nesting level; each must be a positive number within the limit
  const char* p = env;
  while (true) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(p, &end, 10);
    if (end == p || errno == ERANGE || v < 1 || v > kMaxThreads || (*end != '\0' && *end != ',')) {
      std::fprintf(stderr, "gradflow: error: OMP_NUM_THREADS='%.40s' is not a thread count in 1..%d; fix: unset it or "
                   "set OMP_NUM_THREADS to the number of cores\n", env, kMaxThreads);
      std::exit(2);
    }
    if (*end == '\0') return;
    p = end + 1;
  }
}

void tune_runtime_environment(char** argv) {
  check_thread_environment();
  const char* off = std::getenv("GRADFLOW_NO_TUNE");
  if (off != nullptr && *off != '\0' && *off != '0') return;
  bool changed = false;
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr)
    changed |= ::putenv(const_cast<char*>(kSpinCount)) == 0;  // the same entries as the re-execution above
  if (std::getenv("GLIBC_TUNABLES") == nullptr) changed |= ::putenv(const_cast<char*>(kHugePages)) == 0;
  if (std::getenv("OPENBLAS_CORETYPE") == nullptr)
    if (const char* core = better_openblas_core()) changed |= ::setenv("OPENBLAS_CORETYPE", core, 1) == 0;
  if (changed) ::execv("/proc/self/exe", argv);  // returns only if it failed: carry on unchanged
  tune_allocator();
}

}  // namespace gradflow::process
