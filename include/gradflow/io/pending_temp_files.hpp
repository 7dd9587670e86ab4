// pending_temp_files.hpp — the temporary files an atomic write (write_file_atomic) holds right now, so that an
// interrupted run (Ctrl-C, SIGTERM: src/process/interrupt.cpp) removes them instead of leaving `*.tmp.<pid>`
// files beside its outputs. Up to kPendingSlots writes at once (the resumable runner writes from every thread);
// a write beyond that is still atomic, only not cleaned up on an interrupt.
#pragma once
#include <string>

namespace gradflow::io {

inline constexpr int kPendingSlots = 64;

// Registers `path` while it exists; returns its slot (-1: none free). release_pending_temp(slot) when it is gone
// (renamed or removed).
int hold_pending_temp(const std::string& path) noexcept;
void release_pending_temp(int slot) noexcept;

// Unlinks every registered temporary file. Async-signal-safe (atomic loads and unlink only).
void remove_pending_temps() noexcept;

}  // namespace gradflow::io
