// progress.cpp — see progress.hpp.
#include "gradflow/report/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace gradflow {

Progress::Progress(std::string what, Index total, bool enabled)
    // a line rewritten in place ("\r") belongs on a terminal: into a log file or a pipe it would leave a trail of
    // carriage returns, so there the run stays silent
    : what_(std::move(what)), total_(total), enabled_(enabled && ::isatty(STDERR_FILENO)), start_(std::chrono::steady_clock::now()), last_(start_) {}

Progress::~Progress() {
  if (printed_) std::fprintf(stderr, "\n");
}

void Progress::step(Index k) {
  done_ += k;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < 1.0 || (std::chrono::duration<double>(now - last_).count() < 0.5 && done_ < total_)) return;
  last_ = now;
  const double eta = done_ > 0 ? elapsed * static_cast<double>(total_ - done_) / static_cast<double>(done_) : 0.0;
  std::fprintf(stderr, "\r%s: %lld/%lld, %.1fs elapsed, ~%.1fs left   ", what_.c_str(), static_cast<long long>(done_),
               static_cast<long long>(total_), elapsed, eta);
  std::fflush(stderr);
  printed_ = true;
}

}  // namespace gradflow
