// numeric_fix.hpp — the fix a NaN/Inf error of a run gives, chosen from where its numbers came from.
// The library's NaN/Inf errors end with "fix: " + kNonFiniteFix (core/error.hpp), since the engine does not know
// whether x_0 was read from --input or drawn, or the weights loaded or initialized; the command does, and
// with_nonfinite_fix puts the fix that fits in its place: rescale --input (with its largest entry), check
// --weights, lower --init-scale / --residual-scale (with their values).
#pragma once
#include <string>
#include <utility>

#include "gradflow/core/error.hpp"
#include "gradflow/core/types.hpp"
#include "gradflow/run/analyze.hpp"

namespace gradflow {

std::string nonfinite_fix(const RunConfig& rc, const Mat& x0);

// An Error whose message ends with "fix: " + kNonFiniteFix, with nonfinite_fix(rc, x0) in its place; any other
// error unchanged.
Error refit_nonfinite_fix(const Error& e, const RunConfig& rc, const Mat& x0);

template <class F>
decltype(auto) with_nonfinite_fix(const RunConfig& rc, const Mat& x0, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const Error& e) {
    throw refit_nonfinite_fix(e, rc, x0);
  }
}

}  // namespace gradflow
