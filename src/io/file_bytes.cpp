// file_bytes.cpp — whole-file reads and atomic writes (see file_bytes.hpp).
#include "io/file_bytes.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>

#include "gradflow/core/error.hpp"
#include "gradflow/core/sha256.hpp"
#include "gradflow/io/pending_temp_files.hpp"
#include "io/staged_files.hpp"

namespace gradflow::io_detail {

namespace {

[[noreturn]] void throw_read(const std::string& path, const std::string& reason,
                             const std::string& fix = "check the path and its permissions") {
  throw Error("cannot read '" + path + "': " + reason + "; fix: " + fix);
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
    char gib[32];
    std::snprintf(gib, sizeof gib, "%.3g GiB", static_cast<double>(st.st_size) / (1024.0 * 1024.0 * 1024.0));
    throw_read(path, "the file is " + std::string(gib) + " (" + std::to_string(st.st_size) +
                         " bytes), more than can be held in memory here",
               "check that this is the file you meant (it is read whole), or use a machine with more memory");
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

InputFile::InputFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) throw_read(path, std::strerror(errno));
  struct stat st {};
  const int err = ::fstat(fd_, &st) != 0 ? errno : 0;
  if (err != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw_read(path, err != 0 ? std::strerror(err) : S_ISDIR(st.st_mode) ? "it is a directory" : "it is not a regular file");
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

InputFile::~InputFile() { ::close(fd_); }

void InputFile::read_at(uint64_t offset, size_t n, void* dst) const {
  auto* p = static_cast<char*>(dst);
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd_, p + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw_read(path_, std::strerror(errno));
    if (r == 0) throw_read(path_, "the file shrank while it was read (" + std::to_string(offset + got) + " bytes)");
    got += static_cast<size_t>(r);
  }
}

std::string sha256_of_file(const std::string& path) {
  const InputFile f(path);
  Sha256 h;
  std::vector<char> buf(static_cast<size_t>(std::min<uint64_t>(f.size(), uint64_t(1) << 24)));
  for (uint64_t at = 0; at < f.size(); at += buf.size()) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), f.size() - at));
    f.read_at(at, n, buf.data());
    h.update(buf.data(), n);
  }
  return h.hex();
}

namespace {

// Writes every byte of every piece to fd, in order (EINTR-safe); returns 0 or the errno of the failure.
int write_all(int fd, const std::vector<ByteSpan>& pieces) {
  for (const ByteSpan& piece : pieces) {
    const char* p = static_cast<const char*>(piece.data);
    size_t done = 0;
    while (done < piece.size) {
      const ssize_t w = ::write(fd, p + done, piece.size - done);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return errno;
      done += static_cast<size_t>(w);
    }
  }
  return 0;
}

// Writes into an existing FIFO, character device or socket as it is (never renamed over: that would turn a
// device such as /dev/null into a regular file when run as root).
void write_special(const std::string& path, const std::vector<ByteSpan>& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  int err = fd < 0 ? errno : write_all(fd, bytes);
  if (fd >= 0 && ::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) throw Error("cannot write '" + path + "': " + std::strerror(err) + "; fix: choose a writable path");
}

}  // namespace

std::string temp_path_for(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string pid = std::to_string(::getpid());
  long name_max = ::pathconf(dir.empty() ? "." : dir.c_str(), _PC_NAME_MAX);
  if (name_max <= 0) name_max = 255;
  std::string name = base + ".tmp." + pid;
  if (name.size() > static_cast<size_t>(name_max)) {  // a legal long name: keep the temp name within the limit
    const std::string suffix = "~" + std::to_string(std::hash<std::string>{}(base)) + ".tmp." + pid;
    name = "." + base.substr(0, static_cast<size_t>(name_max) - suffix.size() - 1) + suffix;
  }
  return dir + name;
}

OutputKind output_kind(const std::string& path) {
  if (path == "-") return OutputKind::Stdout;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return OutputKind::NewOrRegular;
  if (S_ISDIR(st.st_mode)) return OutputKind::Directory;
  if (S_ISREG(st.st_mode)) return OutputKind::NewOrRegular;
  return OutputKind::Special;  // FIFO, character or block device, socket
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
  write_file_atomic(path, std::vector<ByteSpan>{{bytes.data(), bytes.size()}});
}

void write_file_atomic(const std::string& path_given, const std::vector<ByteSpan>& bytes) {
  switch (output_kind(path_given)) {
    case OutputKind::Stdout: {
      std::fflush(stdout);
      if (const int err = write_all(STDOUT_FILENO, bytes); err != 0)
        throw Error(std::string("cannot write to standard output: ") + std::strerror(err) + "; fix: check the pipe");
      return;
    }
    case OutputKind::Directory:
      throw Error("cannot write '" + path_given + "': it is a directory; fix: name a file inside it");
    case OutputKind::Special: write_special(path_given, bytes); return;
    case OutputKind::NewOrRegular: break;
  }
  std::vector<StagedFile> one{stage_file(path_given, bytes)};
  commit_staged(one, "");
}

StagedFile stage_file(const std::string& path_given, const std::vector<ByteSpan>& bytes) {
  if (output_kind(path_given) == OutputKind::Directory)
    throw Error("cannot write '" + path_given + "': it is a directory; fix: name a file inside it");
  StagedFile f;
  f.given = f.path = path_given;
  // A link to a regular file: replace the file it points to and keep the link.
  struct stat lst;
  if (::lstat(f.path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    if (char* real = ::realpath(f.path.c_str(), nullptr)) {
      f.path = real;
      std::free(real);
    }
  }
  f.tmp = temp_path_for(f.path);
  f.held = io::hold_pending_temp(f.tmp);  // removed by an interrupt (pending_temp_files.hpp)
  auto fail = [&](int err, bool created) {
    if (created) ::unlink(f.tmp.c_str());
    io::release_pending_temp(f.held);
    throw Error("cannot write '" + path_given + "': " + std::strerror(err) + "; fix: choose a writable path");
  };
  const int fd = ::open(f.tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(errno, false);
  if (const int err = write_all(fd, bytes); err != 0) {
    ::close(fd);
    fail(err, true);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    fail(err, true);
  }
  if (::close(fd) != 0) fail(errno, true);
  return f;
}

bool has_control_char(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; });
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
