// fuzz_npy.cpp — libFuzzer target: read_npy on arbitrary bytes loads (then its shape and data agree) or throws
// gradflow::Error (tests/fuzz/README.md).
#include "fuzz_target.hpp"
#include "gradflow/io/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = gradflow::fuzz::input_file(data, size, ".npy");
  gradflow::fuzz::expect_value_or_error([&] {
    const gradflow::NpyArray a = gradflow::read_npy(path);
    size_t count = 1;
    for (int64_t s : a.shape) count *= static_cast<size_t>(s);
    if (count != a.data.size()) std::abort();  // a loaded array holds exactly its shape's elements
  });
  return 0;
}
