// cancel.hpp — cooperative cancellation: a front end that cannot stop the process (the Python module: Ctrl-C in a
// notebook must raise KeyboardInterrupt and leave the interpreter running) asks a running computation to stop, and
// the library stops at its next check: between blocks of the forward and backward passes and of the VJP/JVP
// chains, and between an experiment's jobs. The command line never asks (its Ctrl-C handler ends the process).
#pragma once
#include <stdexcept>

namespace gradflow {

// Thrown by check_cancel; deliberately not a gradflow::Error (nothing catches it as bad input).
class Cancelled : public std::runtime_error {
 public:
  Cancelled() : std::runtime_error("cancelled (interrupted): the computation was asked to stop") {}
};

void request_cancel();    // from any thread, or a signal handler (one atomic store)
void clear_cancel();      // before a new computation
bool cancel_requested();

// Throws Cancelled when a cancellation was requested, on the thread that runs the computation outside any OpenMP
// parallel region — a region of one thread included (inside one, an exception may not leave the region: the check
// waits for the next one outside) — or at the level a CancelCatchHere marks.
void check_cancel();

// Marks the calling thread's current OpenMP nesting level as one whose code catches Cancelled itself (the experiment
// runner's job loop, which turns it into the job's failure): check_cancel throws at that level too, while it is in
// scope. Regions nested deeper (an engine's team inside a job) still never throw.
class CancelCatchHere {
 public:
  CancelCatchHere();
  ~CancelCatchHere();
  CancelCatchHere(const CancelCatchHere&) = delete;
  CancelCatchHere& operator=(const CancelCatchHere&) = delete;

 private:
  int saved_;
};

}  // namespace gradflow
