// checkpoint_fixtures.hpp — what the checkpoint tests (test_checkpoint.cpp, test_hf_decoder_checkpoint.cpp) build
// their files from: tensors whose every value says where it came from, and a read checkpoint's tensor by name.
#pragma once
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "gradflow/io/checkpoint.hpp"

namespace gradflow::test {

// A tensor whose value k is base + k (so every element says where it came from).
inline SafeTensor counting(const std::string& name, std::vector<int64_t> shape, double base) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[static_cast<size_t>(k)] = base + static_cast<double>(k);
  return SafeTensor{name, "", std::move(shape), std::move(v)};
}

// The tensor of that gradflow name in `c` (the test fails when there is none).
inline const SafeTensor& named(const Checkpoint& c, const std::string& name) {
  for (const auto& t : c.tensors)
    if (t.name == name) return t;
  FAIL("no tensor " << name);
  throw;
}

}  // namespace gradflow::test
