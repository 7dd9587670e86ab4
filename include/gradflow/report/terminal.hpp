// terminal.hpp — how the tables on stdout look: log-scale bars beside the numbers (on a terminal by default,
// `--bars` into a file or pipe, `--no-bars` never) and a narrow form for a projector (`--narrow`: no line longer
// than kNarrowColumns, fewer columns, prose lines wrapped).
#pragma once
#include <cstddef>
#include <string>

namespace gradflow {

struct TerminalStyle {
  bool bars = false;
  bool narrow = false;
};

inline constexpr size_t kNarrowColumns = 80;

// A bar of `value` on a log scale whose longest bar (`width` '#') is 10^log10_max, `per_decade` '#' per decade,
// rounded ("<" below one character, "?" for a value that is not positive and finite).
std::string log_bar(double value, double log10_max, int width, int per_decade);

// `text` with every line longer than `width` characters (UTF-8 aware) broken at its last space that fits, the
// continuation indented by four spaces; a line without such a space is left whole.
std::string wrap_lines(const std::string& text, size_t width);

}  // namespace gradflow
