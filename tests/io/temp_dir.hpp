// temp_dir.hpp — test helpers for the file readers: a private temporary directory removed on exit,
// raw byte files, little-endian encoders, and the message of the gradflow::Error a call throws.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "gradflow/core/error.hpp"

namespace gradflow::test {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gradflow_io_XXXXXX").string();
    if (::mkdtemp(&tmpl[0]) == nullptr) throw std::runtime_error("mkdtemp failed for " + tmpl);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw std::runtime_error("test: cannot write " + path);
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

inline std::string le_bytes(uint64_t v, int n) {
  std::string s;
  for (int b = 0; b < n; ++b) s += static_cast<char>((v >> (8 * b)) & 0xFF);
  return s;
}
inline std::string f64_bytes(double v) {
  uint64_t u;
  std::memcpy(&u, &v, 8);
  return le_bytes(u, 8);
}
inline std::string f32_bytes(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return le_bytes(u, 4);
}

// The message of the gradflow::Error that f() throws; "" when it throws none (any other exception
// propagates, failing the test).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const gradflow::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace gradflow::test
