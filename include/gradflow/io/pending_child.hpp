// pending_child.hpp — the child process a command waits for right now (gnuplot, plot/gnuplot.cpp), so that an
// interrupted run (Ctrl-C, SIGTERM: src/process/interrupt.cpp) stops and reaps it instead of leaving it running as
// an orphan. One at a time.
#pragma once

namespace gradflow::io {

// Registers the child `pid` (> 0) until release_pending_child().
void hold_pending_child(int pid) noexcept;
void release_pending_child() noexcept;

// Sends SIGTERM to the held child, if any, and waits for it to end. Async-signal-safe (atomic load, kill, waitpid).
void stop_pending_child() noexcept;

}  // namespace gradflow::io
