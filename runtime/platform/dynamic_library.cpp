// dlopen/dlsym wrapper with errors that name the missing library or symbol.
#include "runtime/platform/dynamic_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <utility>

namespace kforge {

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  handle_ = std::exchange(other.handle_, nullptr);
  path_ = std::move(other.path_);
  return *this;
}

Result<DynamicLibrary> DynamicLibrary::open(const std::string& what,
                                            const std::vector<std::string>& candidates) {
  std::string last_error = "no candidate paths";
  for (const auto& c : candidates) {
    dlerror();
    void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h) {
      DynamicLibrary lib;
      lib.handle_ = h;
      lib.path_ = c;
      return lib;
    }
    const char* e = dlerror();
    last_error = e ? e : c + ": cannot be opened";
  }
  std::string names;
  for (const auto& c : candidates) {
    const std::string base = std::filesystem::path(c).filename().string();
    if (names.find(base) == std::string::npos) names += (names.empty() ? "" : ", ") + base;
  }
  return Error{ErrorCode::kNotFound, what + " (" + names + ") not found: " + last_error, {}};
}

Result<void*> DynamicLibrary::symbol(const std::string& name) const {
  if (!handle_) return Error::internal("symbol " + name + " requested from a library that is not open");
  dlerror();
  void* p = dlsym(handle_, name.c_str());
  if (!p) {
    return Error{ErrorCode::kNotFound,
                 "symbol " + name + " not found in " + std::filesystem::path(path_).filename().string(), {}};
  }
  return p;
}

std::string LoadedFile::text() const {
  return bytes < 0 ? path : path + ", " + std::to_string(bytes) + " bytes";
}

std::string LoadedFile::so_version() const {
  const std::string name = std::filesystem::path(path).filename().string();
  const auto at = name.find(".so.");
  return at == std::string::npos ? "unknown version" : name.substr(at + 4);
}

LoadedFile loaded_file(const DynamicLibrary& lib, void* symbol) {
  Dl_info info{};
  const std::filesystem::path file = dladdr(symbol, &info) != 0 && info.dli_fname
                                         ? std::filesystem::path(info.dli_fname)
                                         : std::filesystem::path(lib.path());
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(file, ec);
  LoadedFile out{(ec ? file : real).string(), -1};
  const auto size = std::filesystem::file_size(out.path, ec);
  if (!ec) out.bytes = static_cast<std::int64_t>(size);
  return out;
}

std::vector<std::string> library_candidates(const std::vector<std::string>& names, const char* env_var,
                                            const std::vector<std::string>& dirs) {
  std::vector<std::string> roots;
  if (const char* env = env_var ? std::getenv(env_var) : nullptr) {
    std::string list = env;
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t colon = list.find(':', start);
      const std::string item = list.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (!item.empty()) roots.push_back(item);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  roots.insert(roots.end(), dirs.begin(), dirs.end());
  std::vector<std::string> out;
  for (const auto& root : roots) {
    for (const auto& sub : {"", "/lib64", "/lib"}) {
      for (const auto& n : names) {
        const std::string p = root + sub + "/" + n;
        std::error_code ec;
        if (std::filesystem::exists(p, ec)) out.push_back(p);
      }
    }
  }
  for (const auto& n : names) out.push_back(n);
  return out;
}

std::vector<std::string> library_files(const std::string& library, const char* env_var,
                                       const std::vector<std::string>& defaults) {
  if (!library.empty()) return {library};
  if (const char* env = env_var ? std::getenv(env_var) : nullptr; env && *env) return {env};
  return defaults;
}

}  // namespace kforge
