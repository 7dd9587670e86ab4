// test_fault.cpp — see test_fault.hpp.
#include "gradflow/io/test_fault.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gradflow::io {

bool test_fault(const char* point) {
  const char* v = std::getenv("GRADFLOW_TEST_FAULT");
  return v && std::strcmp(v, point) == 0;
}

void test_pause(const char* point) {
  if (!test_fault(point)) return;
  std::fprintf(stderr, "gradflow: test pause at %s\n", point);
  std::fflush(stderr);
  const char* resume = std::getenv("GRADFLOW_TEST_RESUME");
  struct stat st;
  for (int i = 0; i < 12000 && resume && ::stat(resume, &st) != 0; ++i) ::usleep(10000);
}

}  // namespace gradflow::io
