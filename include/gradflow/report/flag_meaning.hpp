// flag_meaning.hpp — a swept flag's value as legends and tables name it (a sweep over `--no-final-norm` with values
// false,true): by what it means, not "no-final-norm=true".
#pragma once
#include <algorithm>
#include <string>

namespace gradflow {

// "no-final-norm" true: "no final norm", false: "with final norm"; "causal" true: "causal", false: "no causal";
// "" when the value is not a flag's (true/false, yes/no).
inline std::string flag_meaning(const std::string& param, const std::string& value) {
  if (value != "true" && value != "false" && value != "yes" && value != "no") return "";
  const bool on = value == "true" || value == "yes";
  const bool negated = param.rfind("no-", 0) == 0;
  std::string words = negated ? param.substr(3) : param;
  std::replace(words.begin(), words.end(), '-', ' ');
  if (negated) return (on ? "no " : "with ") + words;
  return (on ? "" : "no ") + words;
}

}  // namespace gradflow
