// atomic_file.cpp — see atomic_file.hpp.
#include "gradflow/report/atomic_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "gradflow/core/error.hpp"
#include "io/file_bytes.hpp"
#include "io/staged_files.hpp"

namespace gradflow {
void write_file_atomic(const std::string& path, const std::string& content) {
  io_detail::write_file_atomic(path, content);  // one implementation: EINTR-safe writes, fsync, rename
}

bool create_file_exclusive(const std::string& path, const std::string& content) {
  std::vector<io_detail::StagedFile> staged{io_detail::stage_file(path, {{content.data(), content.size()}})};
  const int rc = ::link(staged[0].tmp.c_str(), path.c_str());
  const int err = errno;
  io_detail::discard_staged(staged);  // the temporary name goes either way; the link (if made) holds the content
  if (rc == 0) return true;
  if (err == EEXIST) return false;
  throw Error("cannot create '" + path + "': " + std::strerror(err) + "; fix: choose a writable path on a file system "
              "with hard links (the plan is created so that two runs never both write it)");
}

void check_writable(const std::string& path, const std::string& option) {
  switch (io_detail::output_kind(path)) {
    case io_detail::OutputKind::Stdout: return;
    case io_detail::OutputKind::Directory:
      throw Error(option + " '" + path + "' is a directory; fix: name a file inside it");
    case io_detail::OutputKind::Special:
      if (::access(path.c_str(), W_OK) != 0)
        throw Error(option + " '" + path + "' cannot be written: " + std::strerror(errno) + "; fix: choose a writable path");
      return;
    case io_detail::OutputKind::NewOrRegular: break;
  }
  const std::string tmp = io_detail::temp_path_for(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    throw Error(option + " '" + path + "' cannot be written: " + std::strerror(errno) +
                "; fix: choose a path in an existing, writable directory");
  std::fclose(f);
  std::remove(tmp.c_str());
}

namespace {

// Whether a and b name the same file: by device and inode when both exist, else by canonical path.
bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec1, ec2;
  if (fs::exists(a, ec1) && fs::exists(b, ec2)) return fs::equivalent(a, b, ec1) && !ec1;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a, ec1), ec1), cb = fs::weakly_canonical(fs::absolute(b, ec2), ec2);
  return !ec1 && !ec2 && ca == cb;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The folder an input reads files from besides its own path: the input itself when it is a folder (a --weights
// checkpoint folder, a folder of checkpoints), the index file's folder for a sharded checkpoint's index; "" else.
std::filesystem::path input_folder(const std::string& in) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(in, ec)) return fs::canonical(in, ec);
  if (ends_with(in, ".index.json") && fs::is_regular_file(in, ec)) return fs::canonical(fs::absolute(in).parent_path(), ec);
  return {};
}

// Whether writing `out` would change what a load from `folder` reads: `out` lies inside it (at any depth) and
// already exists (config.json, the index, a shard, a tokenizer beside them) or has a checkpoint file's name
// (config.json, *.safetensors, *.index.json: the load would read it next time).
bool changes_folder(const std::string& out, const std::filesystem::path& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path o = fs::weakly_canonical(fs::absolute(out, ec), ec);
  if (ec || folder.empty()) return false;
  const auto m = std::mismatch(folder.begin(), folder.end(), o.begin(), o.end());
  if (m.first != folder.end()) return false;
  const std::string name = o.filename().string();
  return fs::exists(o, ec) || name == "config.json" || ends_with(name, ".safetensors") || ends_with(name, ".index.json");
}

}  // namespace

void check_outputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const NamedPath& out = outputs[i];
    if (out.path.empty() || io_detail::output_kind(out.path) == io_detail::OutputKind::Stdout) continue;
    check_writable(out.path, out.option);
    if (io_detail::output_kind(out.path) == io_detail::OutputKind::Special) continue;
    for (const NamedPath& in : inputs)
      if (!in.path.empty() && same_file(out.path, in.path))
        throw Error(out.option + " '" + out.path + "' is the file " + in.option + " reads ('" + in.path +
                    "'); fix: write the output to another path");
    for (const NamedPath& in : inputs)
      if (!in.path.empty() && changes_folder(out.path, input_folder(in.path)))
        throw Error(out.option + " '" + out.path + "' is a file of the checkpoint folder " + in.option + " reads ('" +
                    in.path + "'); fix: write the output outside that folder");
    for (size_t j = i + 1; j < outputs.size(); ++j)
      if (!outputs[j].path.empty() && same_file(out.path, outputs[j].path))
        throw Error(out.option + " '" + out.path + "' and " + outputs[j].option + " '" + outputs[j].path +
                    "' are the same file; fix: give each output its own path");
  }
}

}  // namespace gradflow
