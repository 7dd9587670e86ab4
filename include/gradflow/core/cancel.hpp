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
// parallel region (inside one, an exception may not leave the region: the check waits for the next one outside).
void check_cancel();

}  // namespace gradflow
