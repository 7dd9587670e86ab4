// csv.cpp — write_csv (see csv.hpp).
#include "gradflow/io/csv.hpp"

#include <cstdio>

#include "io/file_bytes.hpp"

namespace gradflow {

void write_csv(const std::string& path, const Mat& m) {
  std::string text;
  text.reserve(static_cast<size_t>(m.size()) * 24 + static_cast<size_t>(m.rows()));
  char buf[32];
  for (Index i = 0; i < m.rows(); ++i) {
    for (Index j = 0; j < m.cols(); ++j) {
      if (j > 0) text += ',';
      std::snprintf(buf, sizeof buf, "%.17g", m(i, j));
      text += buf;
    }
    text += '\n';
  }
  io_detail::write_file_atomic(path, text);
}

}  // namespace gradflow
