// number_text.cpp — see number_text.hpp.
#include "gradflow/report/number_text.hpp"

#include <cstdio>

namespace gradflow {

std::string number_text(double v, int digits) {
  char buf[64];  // "%.17g" of any double takes at most 24 characters; more digits are cut here
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

}  // namespace gradflow
