// staged_files.hpp — files written under temporary names first and renamed over their paths later, so that several
// files can replace their old versions as one unit (private to src/io): a Hugging Face checkpoint folder's
// model.safetensors and config.json are never left one new and one old (docs/formats.md, "Exporting").
// write_file_atomic (file_bytes.hpp) is one staged file committed at once.
#pragma once
#include <string>
#include <vector>

#include "io/file_bytes.hpp"

namespace gradflow {
struct SafeTensor;
}

namespace gradflow::io_detail {

// A complete, fsync'ed temporary file beside `path` (temp_path_for), held for an interrupt (pending_temp_files.hpp)
// until it is renamed or removed. `given` is the path as the caller named it (for messages); `path` is the file
// replaced (a link's target: the link is kept).
struct StagedFile {
  std::string given, path, tmp;
  int held = -1;
};

// Writes `pieces` to a temporary file beside `path` (a new or regular file; Error for anything else: a staged file
// is always renamed). Error "cannot write 'path': ..." on failure, with nothing left behind.
StagedFile stage_file(const std::string& path, const std::vector<ByteSpan>& pieces);
// The same for a safetensors file (write_safetensors's bytes; implemented in safetensors.cpp).
StagedFile stage_safetensors(const std::string& path, const std::vector<SafeTensor>& tensors);

// Renames every staged file over its path, as one unit: the files they replace are first moved aside (beside
// them), and when any rename fails every path gets back what it held (a path that held nothing is removed) and Error
// names the file. SIGINT/SIGTERM arriving meanwhile is held back until the renames are done (io::begin_commit),
// and the interrupt's message then says `written` instead of "nothing was written". The staged files are consumed
// (released) either way.
void commit_staged(std::vector<StagedFile>& files, const std::string& written);

// Removes staged files that will not be committed (after an error).
void discard_staged(std::vector<StagedFile>& files) noexcept;

}  // namespace gradflow::io_detail
