// checkpoint_errors.hpp — the one-line errors of the --weights reader (private to src/io: checkpoint.cpp,
// checkpoint_files.cpp, checkpoint_format.cpp, hf_config.cpp, hf_name_map.cpp): "where: what; fix: fix", with the
// file's and the tensors' names quoted and made printable.
#pragma once
#include <string>

#include "gradflow/core/error.hpp"
#include "io/file_bytes.hpp"

namespace gradflow::io_detail {

[[noreturn]] inline void fail(const std::string& where, const std::string& what, const std::string& fix) {
  throw Error(where + ": " + what + "; fix: " + fix);
}

inline std::string in_quotes(const std::string& s) { return "'" + printable(s) + "'"; }

}  // namespace gradflow::io_detail
