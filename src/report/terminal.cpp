// terminal.cpp — see terminal.hpp.
#include "gradflow/report/terminal.hpp"

#include "gradflow/core/utf8.hpp"

#include <algorithm>
#include <cmath>

namespace gradflow {

std::string log_bar(double value, double log10_max, int width, int per_decade) {
  if (!(value > 0) || !std::isfinite(value) || !std::isfinite(log10_max)) return "?";
  const double chars = width + per_decade * (std::log10(value) - log10_max);
  if (chars < 0.5) return "<";
  return std::string(static_cast<size_t>(std::lround(std::min<double>(chars, width))), '#');
}

std::string wrap_lines(const std::string& text, size_t width) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    const bool newline = end != std::string::npos;
    if (!newline) end = text.size();
    std::string line = text.substr(start, end - start);
    if (utf8_length(line) > width)  // a table row's padding past its last cell does not count
      while (!line.empty() && line.back() == ' ') line.pop_back();
    std::string indent;
    while (utf8_length(line) + indent.size() > width) {
      // the last space at which the part before it fits
      size_t cut = std::string::npos;
      for (size_t i = 1; i < line.size(); ++i)
        if (line[i] == ' ' && line[i - 1] != ' ' && utf8_length(std::string_view(line).substr(0, i)) + indent.size() <= width) cut = i;
      if (cut == std::string::npos) break;
      out += indent + line.substr(0, cut) + "\n";
      line.erase(0, line.find_first_not_of(' ', cut));
      indent = "    ";
    }
    out += indent + line;
    if (newline) out += "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace gradflow
