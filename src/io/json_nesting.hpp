// json_nesting.hpp — how deep a JSON text nests, counted before it is parsed, so that a hostile file cannot make
// the parser (or the destruction of what it built) exhaust the stack or take minutes.
#pragma once
#include <algorithm>
#include <string>

namespace gradflow::io_detail {

// Deepest nesting of {} and [] outside strings; counting stops once it exceeds `limit` (the result is then
// limit + 1).
inline int json_nesting(const std::string& text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace gradflow::io_detail
