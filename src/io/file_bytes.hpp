// file_bytes.hpp — whole-file I/O shared by the .npy, safetensors and CSV readers and writers (private).
// Reads a file into memory in one piece (so every later length check is against a known size) and
// writes atomically: bytes go to `path.tmp.<pid>`, are fsync'ed, then renamed over `path`.
#pragma once
#include <string>

namespace gradflow::io_detail {

// The whole content of a regular file. Throws Error "cannot read 'path': <reason>; fix: ...".
std::string read_file_bytes(const std::string& path);

// Writes `bytes` to `path.tmp.<pid>` and renames it to `path`; on failure removes the temporary file
// and throws Error "cannot write 'path': <strerror>; fix: choose a writable path".
void write_file_atomic(const std::string& path, const std::string& bytes);

// `s` made safe for a one-line ASCII message: control and non-ASCII bytes as \xNN, cut to `max_len`
// bytes with "...".
std::string printable(const std::string& s, size_t max_len = 80);

}  // namespace gradflow::io_detail
