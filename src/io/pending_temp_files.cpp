// pending_temp_files.cpp — see pending_temp_files.hpp. Each slot is claimed with a compare-exchange, filled, then
// published (state 2); the signal handler reads only published slots. A path longer than the slot is not held.
#include "gradflow/io/pending_temp_files.hpp"

#include <unistd.h>

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

}  // namespace gradflow::io
