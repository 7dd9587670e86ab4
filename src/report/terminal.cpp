// terminal.cpp — see terminal.hpp.
#include "gradflow/report/terminal.hpp"

#include <algorithm>
#include <cmath>

namespace gradflow {
namespace {

size_t shown(const std::string& s, size_t from, size_t to) {
  size_t n = 0;
  for (size_t i = from; i < to; ++i) n += (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
  return n;
}

}  // namespace

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
    if (shown(line, 0, line.size()) > width)  // a table row's padding past its last cell does not count
      while (!line.empty() && line.back() == ' ') line.pop_back();
    std::string indent;
    while (shown(line, 0, line.size()) + indent.size() > width) {
      // the last space at which the part before it fits
      size_t cut = std::string::npos;
      for (size_t i = 1; i < line.size(); ++i)
        if (line[i] == ' ' && line[i - 1] != ' ' && shown(line, 0, i) + indent.size() <= width) cut = i;
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
