// fuzz_spec.cpp — libFuzzer target: an experiment spec (JSON) is loaded, checked and turned into command-line
// words, or refused with gradflow::Error (tests/fuzz/README.md).
#include "fuzz_target.hpp"
#include "gradflow/experiments/spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = gradflow::fuzz::input_file(data, size, ".json");
  gradflow::fuzz::expect_value_or_error([&] {
    const nlohmann::ordered_json spec = gradflow::load_spec(path);
    gradflow::spec_to_args(spec, false);
    gradflow::spec_to_args(spec, true);
  });
  return 0;
}
