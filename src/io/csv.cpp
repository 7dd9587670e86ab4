// csv.cpp — write_csv (see csv.hpp).
#include "gradflow/io/csv.hpp"

#include <charconv>

#include "io/file_bytes.hpp"

namespace gradflow {

void write_csv(const std::string& path, const Mat& m) {
  std::string text;
  text.reserve(static_cast<size_t>(m.size()) * 24 + static_cast<size_t>(m.rows()));
  char buf[32];
  for (Index i = 0; i < m.rows(); ++i) {
    for (Index j = 0; j < m.cols(); ++j) {
      if (j > 0) text += ',';
      // the characters of printf's "%.17g" (the standard defines to_chars with a precision so), without its
      // format parsing and locale: a (2048², 2048²) Jacobian's 4 M values in a fraction of the time
      const auto r = std::to_chars(buf, buf + sizeof buf, m(i, j), std::chars_format::general, 17);
      text.append(buf, r.ptr);
    }
    text += '\n';
  }
  io_detail::write_file_atomic(path, text);
}

}  // namespace gradflow
