// atomic_file.cpp — see atomic_file.hpp.
#include "gradflow/report/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "gradflow/core/error.hpp"
#include "io/file_bytes.hpp"

namespace gradflow {
void write_file_atomic(const std::string& path, const std::string& content) {
  io_detail::write_file_atomic(path, content);  // one implementation: EINTR-safe writes, fsync, rename
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
    for (size_t j = i + 1; j < outputs.size(); ++j)
      if (!outputs[j].path.empty() && same_file(out.path, outputs[j].path))
        throw Error(out.option + " '" + out.path + "' and " + outputs[j].option + " '" + outputs[j].path +
                    "' are the same file; fix: give each output its own path");
  }
}

}  // namespace gradflow
