// file_bytes.cpp — whole-file reads and atomic writes (see file_bytes.hpp).
#include "io/file_bytes.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "gradflow/core/error.hpp"

namespace gradflow::io_detail {

namespace {

[[noreturn]] void throw_read(const std::string& path, const std::string& reason) {
  throw Error("cannot read '" + path + "': " + reason + "; fix: check the path and its permissions");
}

}  // namespace

std::string read_file_bytes(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not hang; it is then rejected as not a regular file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw_read(path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw_read(path, std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw_read(path, S_ISDIR(st.st_mode) ? "it is a directory" : "it is not a regular file");
  }
  std::string bytes;
  try {
    bytes.resize(static_cast<size_t>(st.st_size));
  } catch (const std::exception&) {  // bad_alloc / length_error on an absurd size
    ::close(fd);
    throw_read(path, "file of " + std::to_string(st.st_size) + " bytes does not fit in memory");
  }
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t r = ::read(fd, &bytes[got], bytes.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      const int err = errno;
      ::close(fd);
      throw_read(path, std::strerror(err));
    }
    if (r == 0) break;  // the file shrank while we read it
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  bytes.resize(got);
  return bytes;
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  auto fail = [&](int err, bool created) {
    if (created) ::unlink(tmp.c_str());
    throw Error("cannot write '" + path + "': " + std::strerror(err) + "; fix: choose a writable path");
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(errno, false);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      const int err = errno;
      ::close(fd);
      fail(err, true);
    }
    done += static_cast<size_t>(w);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    fail(err, true);
  }
  if (::close(fd) != 0) fail(errno, true);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail(errno, true);
}

std::string printable(const std::string& s, size_t max_len) {
  const bool cut = s.size() > max_len;
  const size_t n = cut ? max_len : s.size();
  std::string out;
  out.reserve(n + 8);
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7F) {  // control bytes and non-ASCII (which may not be valid UTF-8)
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (cut) out += "...";
  return out;
}

}  // namespace gradflow::io_detail
