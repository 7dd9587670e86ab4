// interrupt.cpp — see interrupt.hpp. The note lives in one of two static buffers and is published by an atomic
// index, so the handler (async-signal-safe: atomic loads, kill, waitpid, write, unlink, _exit) never reads a
// half-copied note.
#include "process/interrupt.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "gradflow/io/pending_child.hpp"
#include "gradflow/io/pending_temp_files.hpp"

namespace gradflow::process {
namespace {

constexpr size_t kNoteMax = 1024;

// A text the handler may read at any moment: two buffers, the one published by `current` is never written.
struct SafeText {
  char buf[2][kNoteMax];
  std::atomic<int> current{-1};
  void set(const std::string& text) {
    const int next = current.load() == 0 ? 1 : 0;
    const size_t n = std::min(text.size(), kNoteMax - 1);
    std::memcpy(buf[next], text.data(), n);
    buf[next][n] = '\0';
    current.store(next);
  }
  const char* get() const {
    const int i = current.load();
    return i >= 0 ? buf[i] : "";
  }
};
SafeText note, context;
bool stderr_is_terminal = false;  // the ^C echo and a progress line share the line: start a new one

void write_str(const char* s) {
  size_t n = std::strlen(s);
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

extern "C" void on_interrupt(int sig) {
  if (io::defer_interrupt(sig)) return;  // files replacing others as one unit: end_commit raises it again
  io::stop_pending_child();  // first, so that it writes no more into the files removed next
  io::remove_pending_temps();
  write_str(stderr_is_terminal ? "\ngradflow: interrupted; " : "gradflow: interrupted; ");
  const char* n = note.get();
  const char* w = io::written_note();
  if (n[0]) {
    write_str(n);
    if (w[0]) write_str("; ");
  }
  if (w[0]) write_str(w);
  if (!n[0] && !w[0]) write_str("nothing was written (outputs are written when the command finishes)");
  if (context.get()[0]) {
    write_str("; ");
    write_str(context.get());
  }
  write_str("\n");
  ::_exit(128 + sig);
}

}  // namespace

void install_interrupt_handler() {
  stderr_is_terminal = ::isatty(STDERR_FILENO) == 1;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  for (const int sig : {SIGINT, SIGTERM}) {
    // a signal the parent ignores stays ignored (a background job of a non-interactive shell ignores SIGINT, and
    // `nohup`-like launchers rely on it): POSIX leaves it to the program, and the shell's convention is to keep it
    struct sigaction old;
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &sa, nullptr);
  }
}

void set_interrupt_note(const std::string& text) { note.set(text); }
void set_interrupt_context(const std::string& text) { context.set(text); }

}  // namespace gradflow::process
