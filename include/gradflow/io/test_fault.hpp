// test_fault.hpp — test-only fault points, so that the hostile tests (tests/hostile/test_data_loss.sh) reach a
// critical step deterministically instead of by timing a signal on a loaded machine. Off unless the environment
// variable GRADFLOW_TEST_FAULT names the point; docs/formats.md ("Test-only fault points") lists them.
#pragma once

namespace gradflow::io {

// Whether GRADFLOW_TEST_FAULT names `point`.
bool test_fault(const char* point);

// When GRADFLOW_TEST_FAULT names `point`: says "gradflow: test pause at POINT" on stderr and waits (up to 120 s)
// until the file GRADFLOW_TEST_RESUME names exists.
void test_pause(const char* point);

}  // namespace gradflow::io
