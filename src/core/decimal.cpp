// decimal.cpp — see decimal.hpp.
#include "gradflow/core/decimal.hpp"

#include <algorithm>
#include <cctype>

namespace gradflow {
namespace {

bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Skips digits from `i`; returns how many.
size_t digits(const std::string& s, size_t& i) {
  const size_t from = i;
  while (i < s.size() && digit(s[i])) ++i;
  return i - from;
}

}  // namespace

bool is_decimal_integer(const std::string& s) {
  size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  return digits(s, i) > 0 && i == s.size();
}

bool is_decimal_number(const std::string& s, bool allow_inf) {
  size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  std::string word = s.substr(i);
  std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::tolower(c); });
  if (word == "inf" || word == "infinity") return allow_inf;
  size_t n = digits(s, i);
  if (i < s.size() && s[i] == '.') {
    ++i;
    n += digits(s, i);
  }
  if (n == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits(s, i) == 0) return false;
  }
  return i == s.size();
}

std::string not_decimal(const std::string& text) {
  std::string shown;
  for (char c : text.substr(0, 40)) shown += (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) ? '?' : c;
  return "'" + shown + (text.size() > 40 ? "...'" : "'") + " is not a decimal number (hexadecimal and other forms are refused)";
}

}  // namespace gradflow
