// test_format_bytes.cpp — sizes in messages (core/format_bytes.hpp): three significant digits, never an exponent.
#include <catch2/catch.hpp>

#include "gradflow/core/format_bytes.hpp"

using namespace gradflow;

TEST_CASE("format_bytes: three significant digits in the largest unit, never an exponent", "[core][quick]") {
  CHECK(format_bytes(512) == "512 B");
  CHECK(format_bytes(1.5 * 1024 * 1024) == "1.5 MiB");
  CHECK(format_bytes(1000.4 * 1024 * 1024) == "1000 MiB");  // no "1e+03 MiB"
  CHECK(format_bytes(1023.9 * 1024 * 1024) == "1024 MiB");
  CHECK(format_bytes(999.4 * 1024) == "999 KiB");
}
