// path_option.hpp — the check of every option that names a file or folder to write (the command line's and a
// spec's, commands/spec_run.hpp): an empty value ('') names nothing and would silently write nothing; refused
// with the fix.
#pragma once
#include <string>

#include <CLI/CLI.hpp>

namespace gradflow {

inline CLI::Validator non_empty_path() {
  return CLI::Validator(
      [](std::string& v) {
        return v.empty() ? std::string("'' names no file or folder; fix: give a path (--json/-o also take - for stdout)")
                         : std::string();
      },
      "PATH");
}

}  // namespace gradflow
