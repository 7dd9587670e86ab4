// file_bytes.hpp — whole-file I/O shared by the .npy, safetensors and CSV readers and writers (private).
// Reads a file into memory in one piece (so every later length check is against a known size) and
// writes atomically (write_file_atomic below).
#pragma once
#include <cstdint>
#include <cstddef>
#include <string>
#include <vector>

namespace gradflow::io_detail {

// The whole content of a regular file. Throws Error "cannot read 'path': <reason>; fix: ...".
std::string read_file_bytes(const std::string& path);

// A regular file opened for reads at given offsets, so a reader can check a header before it reads (or
// allocates for) the data the header names. Same errors as read_file_bytes; closed on destruction.
class InputFile {
 public:
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  uint64_t size() const { return size_; }  // bytes, as fstat saw them at open
  // Reads exactly n bytes at `offset` into dst; Error "cannot read 'path': ..." when the file is shorter now.
  void read_at(uint64_t offset, size_t n, void* dst) const;

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// The SHA-256 of a file's bytes (64 hex digits, as sha256sum prints them), read in pieces of at most 16 MiB. Same
// errors as read_file_bytes.
std::string sha256_of_file(const std::string& path);

// Writes `bytes` to `path` without ever leaving a half-written file and without replacing anything but a regular
// file: a new or regular file gets a temporary file beside it (temp_path_for), fsync'ed, then renamed over it (a
// link to a regular file: the file it points to is replaced, the link kept); an existing FIFO, character device or
// socket is written as it is; "-" is standard output; a directory is refused. On failure the temporary file is
// removed and Error "cannot write 'path': <strerror>; fix: ..." is thrown.
void write_file_atomic(const std::string& path, const std::string& bytes);
// The same for a file made of consecutive pieces (a header, then data left where they are in memory): written one
// after the other with no copy into one buffer, so a large array goes out at memory speed.
struct ByteSpan {
  const void* data;
  size_t size;
};
void write_file_atomic(const std::string& path, const std::vector<ByteSpan>& pieces);

enum class OutputKind { NewOrRegular, Special, Directory, Stdout };
OutputKind output_kind(const std::string& path);
// `path.tmp.<pid>`, or, when that name would exceed the file system's name limit (a legal 255-byte name),
// `.<name cut short>~<hash>.tmp.<pid>` in the same folder.
std::string temp_path_for(const std::string& path);

// `s` made safe for a one-line ASCII message: control and non-ASCII bytes as \xNN, cut to `max_len`
// bytes with "...".
std::string printable(const std::string& s, size_t max_len = 80);
// Whether `s` holds a control byte (below 0x20, or 0x7F: a newline, a carriage return, ...), which ends a line of a
// script or directive it is written into (gnuplot scripts, Slurm batch scripts).
bool has_control_char(const std::string& s);

}  // namespace gradflow::io_detail
