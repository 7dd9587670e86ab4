// error.hpp — the one exception type. Thrown with context anywhere in the library; mapped to exit codes
// only in the command line's main(). Messages are one line: what is wrong, then how to fix it.
#pragma once
#include <stdexcept>
#include <string>

namespace gradflow {

enum class ErrorKind {
  BadInput,  // the user's options or files are wrong: exit code 2
  Numeric,   // NaN/Inf or a failed solver during an analysis: exit code 3
  Internal,  // a bug in gradflow: exit code 4
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg, ErrorKind kind = ErrorKind::BadInput)
      : std::runtime_error(msg), kind_(kind) {}
  ErrorKind kind() const { return kind_; }
  int exit_code() const { return kind_ == ErrorKind::BadInput ? 2 : kind_ == ErrorKind::Numeric ? 3 : 4; }

 private:
  ErrorKind kind_;
};

// The fix every NaN/Inf error of the library ends with ("...; fix: " + kNonFiniteFix). A command that knows where
// the run's numbers came from (--input, --weights, --init-scale, --residual-scale) replaces it with the fix that
// fits: with_nonfinite_fix (include/gradflow/run/numeric_fix.hpp).
inline constexpr const char* kNonFiniteFix = "lower --init-scale or check the weights";

// Throws Error(BadInput) with `msg` unless `cond` holds.
inline void require(bool cond, const std::string& msg) {
  if (!cond) throw Error(msg);
}

}  // namespace gradflow
