// fuzz_safetensors.cpp — libFuzzer target: read_safetensors on arbitrary bytes loads (then every tensor holds
// its shape's elements) or throws gradflow::Error (tests/fuzz/README.md).
#include "fuzz_target.hpp"
#include "gradflow/io/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = gradflow::fuzz::input_file(data, size, ".safetensors");
  gradflow::fuzz::expect_value_or_error([&] {
    for (const gradflow::SafeTensor& t : gradflow::read_safetensors(path)) {
      size_t count = 1;
      for (int64_t s : t.shape) count *= static_cast<size_t>(s);
      if (count != t.data.size()) std::abort();
    }
  });
  return 0;
}
