// atomic_file.cpp — see atomic_file.hpp.
#include "gradflow/report/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "gradflow/core/error.hpp"
#include "io/file_bytes.hpp"

namespace gradflow {
namespace {
std::string temp_name(const std::string& path) { return path + ".tmp." + std::to_string(::getpid()); }
}  // namespace

void write_file_atomic(const std::string& path, const std::string& content) {
  io_detail::write_file_atomic(path, content);  // one implementation: EINTR-safe writes, fsync, rename
}

void check_writable(const std::string& path, const std::string& option) {
  const std::string tmp = temp_name(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    throw Error(option + " '" + path + "' cannot be written: " + std::strerror(errno) +
                "; fix: choose a path in an existing, writable directory");
  std::fclose(f);
  std::remove(tmp.c_str());
}

}  // namespace gradflow
