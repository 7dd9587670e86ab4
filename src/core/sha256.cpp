// sha256.cpp — see sha256.hpp. The constants are computed, not typed in: the first 32 bits of the fractional parts
// of the square roots (initial hash) and cube roots (round constants) of the first primes (FIPS 180-4 §4.2.2,
// §5.3.3), as exact integer roots, so no digit can be mistyped; the test checks the standard's example digests.
#include "gradflow/core/sha256.hpp"

#include <algorithm>

namespace gradflow {

namespace {

using u128 = unsigned __int128;

// floor(p^(1/k) * 2^32) mod 2^32 for k = 2, 3: the largest x with x^k <= p * 2^(32k) (binary search, exact).
uint32_t root_bits(uint32_t p, int k) {
  const u128 target = static_cast<u128>(p) << (32 * k);
  uint64_t lo = 0, hi = uint64_t(1) << 41;  // p < 2^9: the root times 2^32 is below 2^41
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    u128 v = 1;
    for (int i = 0; i < k; ++i) v *= mid;
    (v <= target ? lo : hi) = mid;
  }
  return static_cast<uint32_t>(lo);  // the integer part drops out mod 2^32
}

struct Constants {
  std::array<uint32_t, 8> h0;
  std::array<uint32_t, 64> k;
  Constants() {
    int found = 0;
    for (uint32_t n = 2; found < 64; ++n) {
      bool prime = true;
      for (uint32_t d = 2; d * d <= n; ++d) prime = prime && n % d != 0;
      if (!prime) continue;
      if (found < 8) h0[static_cast<size_t>(found)] = root_bits(n, 2);
      k[static_cast<size_t>(found++)] = root_bits(n, 3);
    }
  }
};

const Constants& constants() {
  static const Constants c;
  return c;
}

uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

}  // namespace

Sha256::Sha256() : h_(constants().h0) {}

void Sha256::block(const unsigned char* p) {
  const auto& K = constants().k;
  uint32_t w[64];
  for (int t = 0; t < 16; ++t)
    w[t] = uint32_t(p[4 * t]) << 24 | uint32_t(p[4 * t + 1]) << 16 | uint32_t(p[4 * t + 2]) << 8 | uint32_t(p[4 * t + 3]);
  for (int t = 16; t < 64; ++t) {
    const uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
  for (int t = 0; t < 64; ++t) {
    const uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[static_cast<size_t>(t)] + w[t];
    const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
  }
  h_[0] += a, h_[1] += b, h_[2] += c, h_[3] += d, h_[4] += e, h_[5] += f, h_[6] += g, h_[7] += h;
}

void Sha256::update(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  total_ += n;
  while (n > 0) {
    if (used_ == 0 && n >= 64) {  // whole blocks straight from the input
      block(p);
      p += 64, n -= 64;
      continue;
    }
    const size_t take = std::min(n, 64 - used_);
    std::copy(p, p + take, buf_.begin() + static_cast<std::ptrdiff_t>(used_));
    used_ += take, p += take, n -= take;
    if (used_ == 64) block(buf_.data()), used_ = 0;
  }
}

std::string Sha256::hex() {
  const uint64_t bits = total_ * 8;
  const unsigned char one = 0x80, zero = 0;
  update(&one, 1);
  while (used_ != 56) update(&zero, 1);
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
  update(len, 8);
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (uint32_t v : h_)
    for (int s = 28; s >= 0; s -= 4) out += digits[(v >> s) & 0xF];
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 s;
  s.update(bytes);
  return s.hex();
}

}  // namespace gradflow
