// progress.hpp — progress lines on stderr for long loops: silent for the first second, then one line per
// step at most every half second, with the estimated time remaining.
#pragma once
#include <chrono>
#include <string>

#include "gradflow/core/types.hpp"

namespace gradflow {

class Progress {
 public:
  Progress(std::string what, Index total, bool enabled = true);
  ~Progress();  // ends the line when anything was printed
  void step(Index k = 1);

 private:
  std::string what_;
  Index total_, done_ = 0;
  bool enabled_, printed_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace gradflow
