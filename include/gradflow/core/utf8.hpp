// utf8.hpp — text measured as a terminal or a figure shows it: UTF-8 characters, not bytes ("±" and "‖" are one
// character, two or three bytes).
#pragma once
#include <cstddef>
#include <string_view>

namespace gradflow {

// The characters of `s`: its bytes that start a UTF-8 sequence (not 10xxxxxx continuation bytes).
inline size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// Whether byte `i` of `s` starts a character (a cut there leaves no half character).
inline bool utf8_starts(std::string_view s, size_t i) {
  return i >= s.size() || (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
}

}  // namespace gradflow
