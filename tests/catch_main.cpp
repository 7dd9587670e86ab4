// catch_main.cpp — Catch2 v2's main, compiled once and linked into every test executable. It first takes the
// gradflow executable's process settings (src/process/runtime_env.cpp): with `ctest -j2` on 2 cores, test processes
// whose OpenMP threads spin while waiting slowed each other down 30-fold.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "process/runtime_env.hpp"

int main(int argc, char** argv) {
  gradflow::process::tune_runtime_environment(argv);
  return Catch::Session().run(argc, argv);
}
