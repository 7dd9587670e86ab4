// atomic_file.hpp — output files appear whole or not at all: written to PATH.tmp.<pid>, then renamed.
#pragma once
#include <string>
#include <vector>

namespace gradflow {

// Writes `content` to `path` atomically; throws Error naming the path and the fix when it cannot.
void write_file_atomic(const std::string& path, const std::string& content);
// Creates `path` with `content` unless something already exists there: written whole to a temporary file, then
// linked in under the name, which fails when the name exists, so of two writers racing for the same path exactly one
// creates it. Returns false (and writes nothing) when the path existed. Error naming the path otherwise (also on a
// file system without hard links).
bool create_file_exclusive(const std::string& path, const std::string& content);
// Throws Error (exit code 2) unless a file can be created at `path` (checked before long computations;
// nothing is left behind). `option` names the flag in the message, e.g. "--json".
void check_writable(const std::string& path, const std::string& option);

// An option and the path it names ("" = not given).
struct NamedPath {
  std::string option;  // e.g. "--json"
  std::string path;
};
// Before any work: every output given is writable (check_writable), and none is the same file as an input or as
// another output, nor a file of an input folder (a --weights checkpoint folder, or the folder of an index
// file): a file already in it at any depth, or one named config.json, *.safetensors or *.index.json — compared as files (links, hard links, "./" spellings and relative paths all caught), a path
// that does not exist yet by its canonical form. "-" (stdout) and devices/FIFOs are not compared. Error (exit 2)
// naming both options otherwise.
void check_outputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

}  // namespace gradflow
