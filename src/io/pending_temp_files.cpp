// pending_temp_files.cpp — see pending_temp_files.hpp. Each slot is claimed with a compare-exchange, filled, then
// published (state 2); the signal handler reads only published slots. A path longer than the slot is not held.
#include "gradflow/io/pending_temp_files.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include <atomic>
#include <cstring>

namespace gradflow::io {
namespace {

constexpr size_t kPathMax = 4096;
struct Slot {
  std::atomic<int> state{0};  // 0 free, 1 being filled, 2 published
  char path[kPathMax];
};
Slot slots[kPendingSlots];
static_assert(std::atomic<int>::is_always_lock_free, "the handler needs lock-free atomics");

std::atomic<int> committing{0}, deferred{0};
// The written note: two buffers, the one published by `note_index` is never written (as process/interrupt.cpp's
// note); writers take `note_lock`.
constexpr size_t kNoteMax = 1024;
char notes[2][kNoteMax];
std::atomic<int> note_index{-1};
std::atomic_flag note_lock = ATOMIC_FLAG_INIT;

}  // namespace

int hold_pending_temp(const std::string& path) noexcept {
  if (path.size() + 1 > kPathMax) return -1;
  for (int i = 0; i < kPendingSlots; ++i) {
    int expected = 0;
    if (!slots[i].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(slots[i].path, path.c_str(), path.size() + 1);
    slots[i].state.store(2);
    return i;
  }
  return -1;
}

void release_pending_temp(int slot) noexcept {
  if (slot >= 0 && slot < kPendingSlots) slots[slot].state.store(0);
}

void remove_pending_temps() noexcept {
  for (auto& s : slots)
    if (s.state.load() == 2) ::unlink(s.path);
}

void begin_commit() noexcept { committing.fetch_add(1); }

void end_commit(const std::string& written) noexcept {
  if (!written.empty()) {
    while (note_lock.test_and_set()) {
    }
    const int next = note_index.load() == 0 ? 1 : 0;
    const size_t n = std::min(written.size(), kNoteMax - 1);
    std::memcpy(notes[next], written.data(), n);
    notes[next][n] = '\0';
    note_index.store(next);
    note_lock.clear();
  }
  // Last one out raises a kept signal. The handler stores `deferred` before it reads `committing`, and this reads
  // `deferred` after lowering `committing`: a signal is never lost (at worst both see it, and the process exits).
  if (committing.fetch_sub(1) == 1)
    if (const int sig = deferred.exchange(0)) ::raise(sig);
}

bool defer_interrupt(int sig) noexcept {
  deferred.store(sig);
  if (committing.load() > 0) return true;
  deferred.store(0);
  return false;
}

const char* written_note() noexcept {
  const int i = note_index.load();
  return i >= 0 ? notes[i] : "";
}

}  // namespace gradflow::io
