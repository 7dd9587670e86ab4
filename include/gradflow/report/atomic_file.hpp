// atomic_file.hpp — output files appear whole or not at all: written to PATH.tmp.<pid>, then renamed.
#pragma once
#include <string>

namespace gradflow {

// Writes `content` to `path` atomically; throws Error naming the path and the fix when it cannot.
void write_file_atomic(const std::string& path, const std::string& content);
// Throws Error (exit code 2) unless a file can be created at `path` (checked before long computations;
// nothing is left behind). `option` names the flag in the message, e.g. "--json".
void check_writable(const std::string& path, const std::string& option);

}  // namespace gradflow
