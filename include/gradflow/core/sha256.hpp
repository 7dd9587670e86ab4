// sha256.hpp — SHA-256 (FIPS 180-4), the content identity of the files a run reads: a result is reused (--resume,
// a plan's task, merge) only when the files it was computed from have the same digest (docs/formats.md).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gradflow {

// Incremental: update() with the bytes in any pieces, then hex() once (64 lowercase hex digits, as sha256sum
// prints them).
class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::string hex();  // the digest of everything given; the object is spent afterwards

 private:
  void block(const unsigned char* p);
  std::array<uint32_t, 8> h_;
  std::array<unsigned char, 64> buf_{};
  size_t used_ = 0;     // bytes waiting in buf_
  uint64_t total_ = 0;  // bytes given in all
};

std::string sha256_hex(std::string_view bytes);

}  // namespace gradflow
