// cancel.cpp — see cancel.hpp.
#include "gradflow/core/cancel.hpp"

#include <omp.h>

#include <atomic>

namespace gradflow {
namespace {
std::atomic<bool> requested{false};
}  // namespace

void request_cancel() { requested.store(true, std::memory_order_relaxed); }
void clear_cancel() { requested.store(false, std::memory_order_relaxed); }
bool cancel_requested() { return requested.load(std::memory_order_relaxed); }

void check_cancel() {
  if (requested.load(std::memory_order_relaxed) && !omp_in_parallel()) throw Cancelled();
}

}  // namespace gradflow
