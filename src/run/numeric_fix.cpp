// numeric_fix.cpp — see numeric_fix.hpp.
#include "gradflow/run/numeric_fix.hpp"

#include <cmath>
#include <vector>

#include "gradflow/report/number_text.hpp"

namespace gradflow {
namespace {
// A placement constant this large is named as a suspect of an overflow (the schemes' own values are of order 1-10:
// DeepNorm's alpha = (2L)^(1/4), ReZero's initial alpha 0).
constexpr double kLargeSchemeValue = 1e6;
}  // namespace

std::string nonfinite_fix(const RunConfig& rc, const Mat& x0) {
  std::vector<std::string> fixes;
  if (!rc.input.empty()) {
    const double m = x0.size() > 0 ? x0.cwiseAbs().maxCoeff() : 0.0;
    fixes.push_back("rescale --input (its largest |entry| is " + number_text(m, 3) + ")");
  }
  if (!rc.weights.empty()) fixes.push_back("check the --weights file");
  else if (rc.init.scale != 1.0) fixes.push_back("lower --init-scale (now " + rc.init.scale_text + ")");
  if (rc.model.residual_scale != 1.0)
    fixes.push_back("lower --residual-scale (now " + number_text(rc.model.residual_scale, 3) + ")");
  // a placement's own constants given (--deepnorm-alpha, --rezero-alpha, ...): large ones scale a branch or the stream
  for (const auto& [name, value] : rc.model.scheme.numbers)
    if (std::abs(value) > kLargeSchemeValue) fixes.push_back("lower --" + name + " (now " + number_text(value, 3) + ")");
  if (fixes.empty()) return kNonFiniteFix;
  std::string out = fixes[0];
  for (size_t i = 1; i < fixes.size(); ++i) out += " or " + fixes[i];
  return out;
}

Error refit_nonfinite_fix(const Error& e, const RunConfig& rc, const Mat& x0) {
  const std::string msg = e.what();
  const std::string tail = std::string("fix: ") + kNonFiniteFix;
  if (msg.size() < tail.size() || msg.compare(msg.size() - tail.size(), tail.size(), tail) != 0) return e;
  return Error(msg.substr(0, msg.size() - tail.size()) + "fix: " + nonfinite_fix(rc, x0), e.kind());
}

}  // namespace gradflow
