// json_text.cpp — see json_text.hpp.
#include "gradflow/report/json_text.hpp"

#include <cstdio>

namespace gradflow {
namespace {

using Json = nlohmann::ordered_json;

// The length of the valid UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF),
// or 0 when the byte there does not start one.
size_t utf8_length(const std::string& s, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = at(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) n = 3;
  else if (c == 0xED) n = 3, hi = 0x9F;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else if (c == 0xF4) n = 4, hi = 0x8F;
  else return 0;
  if (i + n > s.size() || at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (at(i + k) < 0x80 || at(i + k) > 0xBF) return 0;
  return n;
}

bool valid(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string escaped(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_length(s, i);
    if (n > 0) {
      out.append(s, i, n);
      i += n;
    } else {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned char>(s[i]));
      out += buf;
      ++i;
    }
  }
  return out;
}

bool all_valid(const Json& j) {
  if (j.is_string()) return valid(j.get_ref<const std::string&>());
  if (j.is_object()) {
    for (const auto& [k, v] : j.items())
      if (!valid(k) || !all_valid(v)) return false;
    return true;
  }
  if (j.is_array()) {
    for (const Json& v : j)
      if (!all_valid(v)) return false;
  }
  return true;
}

Json fixed(const Json& j) {
  if (j.is_string()) return escaped(j.get_ref<const std::string&>());
  if (j.is_object()) {
    Json out = Json::object();
    for (const auto& [k, v] : j.items()) out[escaped(k)] = fixed(v);
    return out;
  }
  if (j.is_array()) {
    Json out = Json::array();
    for (const Json& v : j) out.push_back(fixed(v));
    return out;
  }
  return j;
}

}  // namespace

Json utf8_safe(const Json& j) { return all_valid(j) ? j : fixed(j); }

std::string json_text(const Json& j, int indent) {
  if (all_valid(j)) return j.dump(indent);
  return fixed(j).dump(indent);
}

}  // namespace gradflow
