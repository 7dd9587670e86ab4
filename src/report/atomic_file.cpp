// atomic_file.cpp — see atomic_file.hpp.
#include "gradflow/report/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "gradflow/error.hpp"

namespace gradflow {
namespace {
std::string temp_name(const std::string& path) { return path + ".tmp." + std::to_string(::getpid()); }
}  // namespace

void write_file_atomic(const std::string& path, const std::string& content) {
  const std::string tmp = temp_name(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error("cannot write '" + path + "': " + std::strerror(errno) + "; fix: choose a writable path");
  const bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw Error("cannot write '" + path + "': " + why + "; fix: check free space and permissions");
  }
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
