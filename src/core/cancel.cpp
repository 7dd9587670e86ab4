// cancel.cpp — see cancel.hpp.
#include "gradflow/core/cancel.hpp"

#include <omp.h>

#include <atomic>

namespace gradflow {
namespace {
std::atomic<bool> requested{false};
// The OpenMP nesting level at which this thread's code catches Cancelled: 0 (outside every parallel region) unless a
// CancelCatchHere says otherwise.
thread_local int catching_level = 0;
}  // namespace

CancelCatchHere::CancelCatchHere() : saved_(catching_level) { catching_level = omp_get_level(); }
CancelCatchHere::~CancelCatchHere() { catching_level = saved_; }

void request_cancel() { requested.store(true, std::memory_order_relaxed); }
void clear_cancel() { requested.store(false, std::memory_order_relaxed); }
bool cancel_requested() { return requested.load(std::memory_order_relaxed); }

void check_cancel() {
  // omp_get_level, not omp_in_parallel: a region of one thread is inactive, so omp_in_parallel is false inside it,
  // and an exception thrown there would still leave the region (std::terminate: the interpreter aborted)
  if (requested.load(std::memory_order_relaxed) && omp_get_level() == catching_level) throw Cancelled();
}

}  // namespace gradflow
