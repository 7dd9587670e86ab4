// pending_child.cpp — see pending_child.hpp.
#include "gradflow/io/pending_child.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <cerrno>

namespace gradflow::io {
namespace {

std::atomic<int> held{0};
static_assert(std::atomic<int>::is_always_lock_free, "the handler needs lock-free atomics");

}  // namespace

void hold_pending_child(int pid) noexcept { held.store(pid > 0 ? pid : 0); }
void release_pending_child() noexcept { held.store(0); }

void stop_pending_child() noexcept {
  const int pid = held.exchange(0);
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
}

}  // namespace gradflow::io
