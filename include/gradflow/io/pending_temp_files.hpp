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

// Several files replacing their old versions as one unit (io_detail::commit_staged): between begin_commit and
// end_commit the interrupt handler defers SIGINT/SIGTERM (defer_interrupt keeps the signal and returns true), and
// end_commit raises a kept signal again once no commit is running, after publishing `written` (what now holds the
// new files; "" for nothing) for the handler's message (written_note). Commits may overlap across threads.
void begin_commit() noexcept;
void end_commit(const std::string& written) noexcept;
// For the handler: true when a commit runs and the signal was kept for end_commit (return from the handler).
bool defer_interrupt(int sig) noexcept;
// What the last commit replaced, for "interrupted; ...": e.g. "the folder 'ck' holds the new export"; "" when none.
const char* written_note() noexcept;

}  // namespace gradflow::io
