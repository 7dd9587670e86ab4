// atomic_file.cpp — see atomic_file.hpp.
#include "gradflow/report/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "gradflow/core/error.hpp"
#include "io/file_bytes.hpp"

namespace gradflow {
void write_file_atomic(const std::string& path, const std::string& content) {
  io_detail::write_file_atomic(path, content);  // one implementation: EINTR-safe writes, fsync, rename
}

void check_writable(const std::string& path, const std::string& option) {
  switch (io_detail::output_kind(path)) {
    case io_detail::OutputKind::Stdout: return;
    case io_detail::OutputKind::Directory:
      throw Error(option + " '" + path + "' is a directory; fix: name a file inside it");
    case io_detail::OutputKind::Special:
      if (::access(path.c_str(), W_OK) != 0)
        throw Error(option + " '" + path + "' cannot be written: " + std::strerror(errno) + "; fix: choose a writable path");
      return;
    case io_detail::OutputKind::NewOrRegular: break;
  }
  const std::string tmp = io_detail::temp_path_for(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    throw Error(option + " '" + path + "' cannot be written: " + std::strerror(errno) +
                "; fix: choose a path in an existing, writable directory");
  std::fclose(f);
  std::remove(tmp.c_str());
}

}  // namespace gradflow
