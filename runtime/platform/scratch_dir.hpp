// A private directory under the system's temporary directory for the files a
// child process (clang, Triton) reads and writes, removed with them when the
// guard goes.
#pragma once

#include <filesystem>
#include <string>
#include <system_error>

#include <stdlib.h>

#include "core/result.hpp"

namespace kforge {

struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(std::filesystem::path p) : path(std::move(p)) {}
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

/// A new directory "<tmp>/<prefix>-XXXXXX"; kInternal naming it when it cannot be made.
inline Result<std::filesystem::path> make_scratch_dir(const std::string& prefix) {
  std::string templ = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!::mkdtemp(templ.data())) return Error::internal("cannot create a directory under " + templ);
  return std::filesystem::path(templ);
}

}  // namespace kforge
