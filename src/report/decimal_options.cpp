// decimal_options.cpp — see decimal_options.hpp.
#include "gradflow/report/decimal_options.hpp"

#include <string>

#include "gradflow/core/decimal.hpp"

namespace gradflow {
namespace {

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

CLI::Validator decimal(bool integer) {
  return CLI::Validator(
      [integer](std::string& v) -> std::string {
        if (integer ? !is_decimal_integer(v) : !is_decimal_number(v))
          return not_decimal(v) + "; fix: write it in decimal" + (integer ? ", a whole number" : "");
        if (integer) {  // CLI11 reads a leading 0 as octal: drop the zeros (decimal, as written)
          const size_t sign = (v[0] == '+' || v[0] == '-') ? 1 : 0;
          size_t z = sign;
          while (z + 1 < v.size() && v[z] == '0') ++z;
          v.erase(sign, z - sign);
        }
        return std::string();
      },
      "");  // no description: the help keeps its type names
}

}  // namespace

void decimal_numbers_only(CLI::App& app) {
  for (CLI::Option* o : app.get_options()) {
    const std::string type = o->get_type_name();
    // transform, not check: a check runs on a copy (CLI11 marks it non-modifying), and the leading zeros must go
    // from the value itself; a transform also runs first, before any range check reads the text
    if (starts_with(type, "INT") || starts_with(type, "UINT")) o->transform(decimal(true));
    else if (starts_with(type, "FLOAT")) o->transform(decimal(false));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) decimal_numbers_only(*sub);
}

}  // namespace gradflow
