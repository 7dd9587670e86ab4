// test_sha256.cpp — SHA-256 (core/sha256.hpp) against the example digests of FIPS 180-4 (and Python's hashlib,
// which gives the same), in one piece and in every split of the input.
#include <catch2/catch.hpp>

#include <string>

#include "gradflow/core/sha256.hpp"

using namespace gradflow;

TEST_CASE("sha256: the standard's examples", "[core][quick]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the length no longer fits the first block's padding
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256: the digest does not depend on how the bytes are split", "[core][quick]") {
  std::string s;
  for (int i = 0; i < 200; ++i) s += static_cast<char>((i * 37 + 11) % 256);
  const std::string whole = sha256_hex(s);
  for (size_t cut = 0; cut <= s.size(); ++cut) {
    Sha256 h;
    h.update(s.substr(0, cut));
    h.update(s.substr(cut));
    REQUIRE(h.hex() == whole);
  }
  Sha256 bytewise;
  for (char c : s) bytewise.update(&c, 1);
  CHECK(bytewise.hex() == whole);
  CHECK(sha256_hex(s.substr(0, 199)) != whole);
}
