// decimal.hpp — the one number syntax of every option of every command (and of a spec's options, and the lists
// of --values, --seeds, --widths ...): decimal only. strtod and CLI11 also read hexadecimal (0x10, 0x1p-1), and
// CLI11 reads an integer with a leading 0 as octal (010 = 8): silent wrong values, refused or read as decimal here.
#pragma once
#include <string>

namespace gradflow {

// [+-]digits, optionally with a fraction and a decimal exponent ("0.5", "-1e-3", ".25", "3."); with `allow_inf`
// also inf / infinity in any case, signed. Never hexadecimal, never blanks, never nan.
bool is_decimal_number(const std::string& text, bool allow_inf = true);
// [+-]digits (leading zeros are read as decimal: "010" is ten).
bool is_decimal_integer(const std::string& text);
// The message part for a text that is not one: "'0x10' is not a decimal number (hexadecimal and other forms are
// refused)".
std::string not_decimal(const std::string& text);

}  // namespace gradflow
