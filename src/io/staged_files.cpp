// staged_files.cpp — see staged_files.hpp.
#include "io/staged_files.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "gradflow/core/error.hpp"
#include "gradflow/io/pending_temp_files.hpp"
#include "gradflow/io/test_fault.hpp"

namespace gradflow::io_detail {

void discard_staged(std::vector<StagedFile>& files) noexcept {
  for (StagedFile& f : files) {
    if (f.tmp.empty()) continue;
    ::unlink(f.tmp.c_str());
    io::release_pending_temp(f.held);
    f.tmp.clear();
  }
}

void commit_staged(std::vector<StagedFile>& files, const std::string& written) {
  if (files.size() == 1) {  // one rename is atomic by itself
    StagedFile& f = files[0];
    if (std::rename(f.tmp.c_str(), f.path.c_str()) != 0) {
      const int err = errno;
      discard_staged(files);
      throw Error("cannot write '" + f.given + "': " + std::strerror(err) + "; fix: choose a writable path");
    }
    io::release_pending_temp(f.held);
    f.tmp.clear();
    return;
  }
  if (io::test_fault("staged")) ::raise(SIGTERM);
  io::begin_commit();  // an interrupt from here on waits for the renames
  struct Done {
    std::string path, aside;  // aside: where the old file went ("" when the path held nothing)
  };
  std::vector<Done> done;
  int err = 0;
  size_t failed = files.size();
  for (size_t i = 0; i < files.size() && !err; ++i) {
    StagedFile& f = files[i];
    Done d{f.path, ""};
    struct stat st;
    if (::lstat(f.path.c_str(), &st) == 0) {
      d.aside = temp_path_for(f.path + ".old");
      if (std::rename(f.path.c_str(), d.aside.c_str()) != 0) {
        err = errno;
        failed = i;
        break;
      }
    }
    const bool fault = i + 1 == files.size() && io::test_fault("commit-fail");
    if (fault || std::rename(f.tmp.c_str(), f.path.c_str()) != 0) {
      err = fault ? EIO : errno;
      failed = i;
      if (!d.aside.empty()) std::rename(d.aside.c_str(), f.path.c_str());  // this file back first
      break;
    }
    io::release_pending_temp(f.held);
    f.tmp.clear();
    done.push_back(d);
    if (i == 0 && io::test_fault("commit-signal")) ::raise(SIGTERM);  // held back until the renames are done
  }
  if (err) {
    std::string unrestored;
    for (auto it = done.rbegin(); it != done.rend(); ++it) {
      const bool ok = it->aside.empty() ? ::unlink(it->path.c_str()) == 0
                                        : std::rename(it->aside.c_str(), it->path.c_str()) == 0;
      if (!ok) unrestored += (unrestored.empty() ? "" : ", ") + (it->aside.empty() ? it->path : it->aside);
    }
    discard_staged(files);
    io::end_commit("");
    throw Error("cannot write '" + files[failed].given + "': " + std::strerror(err) +
                (unrestored.empty() ? std::string("; the files it replaces were put back as they were")
                                    : "; these could not be put back: " + unrestored) +
                "; fix: choose a writable path with enough space");
  }
  for (const Done& d : done)
    if (!d.aside.empty()) ::unlink(d.aside.c_str());
  io::end_commit(written);
}

}  // namespace gradflow::io_detail
