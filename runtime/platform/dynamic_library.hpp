// A shared library opened at run time with dlopen, so that kforge builds and
// runs without the CUDA or HIP driver and compiler installed.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace kforge {

class DynamicLibrary {
 public:
  DynamicLibrary() = default;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
  /// Never dlcloses: driver libraries register atexit handlers and threads
  /// that must outlive every handle kforge holds.
  ~DynamicLibrary() = default;

  /// Opens the first of `candidates` (file names searched on the loader path,
  /// or absolute paths) that loads. None: kNotFound naming `what` and every
  /// candidate with the loader's reason for the last one, e.g. "CUDA driver
  /// (libcuda.so.1) not found: libcuda.so.1: cannot open shared object file".
  static Result<DynamicLibrary> open(const std::string& what, const std::vector<std::string>& candidates);

  /// The address of `name`; kNotFound "symbol cuInit not found in libcuda.so.1".
  Result<void*> symbol(const std::string& name) const;

  /// Binds `fn` to the symbol `name` with the function type of `fn`.
  template <typename Fn>
  Status bind(Fn*& fn, const std::string& name) const {
    KF_TRY_ASSIGN(p, symbol(name));
    fn = reinterpret_cast<Fn*>(p);
    return ok_status();
  }

  const std::string& path() const { return path_; }  ///< the candidate that loaded
  bool loaded() const { return handle_ != nullptr; }

 private:
  void* handle_ = nullptr;
  std::string path_;
};

/// The file a loaded library came from, as an identity shows it: its real
/// path (links resolved) and its size, found through one of its symbols.
struct LoadedFile {
  std::string path;
  std::int64_t bytes = -1;  ///< -1 where the size cannot be read
  /// "<path>, <bytes> bytes", or the path alone.
  std::string text() const;
  /// The version the file name carries after ".so." ("1.5.3" of
  /// libclblast.so.1.5.3); "unknown version" where it has none.
  std::string so_version() const;
};
LoadedFile loaded_file(const DynamicLibrary& lib, void* symbol);

/// Candidate paths for a library of a toolkit: `names` under each directory of
/// `env_var` (a path list, e.g. KFORGE_CUDA_PATH) and of `dirs`, then the bare
/// names for the loader's own search (LD_LIBRARY_PATH, ldconfig).
std::vector<std::string> library_candidates(const std::vector<std::string>& names, const char* env_var,
                                            const std::vector<std::string>& dirs);

/// Candidate files for a library a caller or user may name outright (the
/// vendor monitoring libraries, or fakes in tests): `library` when given,
/// else the file in `env_var` when set, else `defaults` for the loader.
std::vector<std::string> library_files(const std::string& library, const char* env_var,
                                       const std::vector<std::string>& defaults);

/// `load(candidates)` once per distinct candidate list for the process; later
/// calls return the first outcome. Thread-safe.
template <class Api>
const Result<const Api*>& load_once(const std::vector<std::string>& candidates,
                                    Result<const Api*> (*load)(const std::vector<std::string>&)) {
  static std::mutex mutex;
  // Never destroyed: the APIs live as long as the process (their libraries
  // stay loaded), and a leak checker still reaches them through it at exit.
  static auto* loaded = new std::map<std::vector<std::string>, Result<const Api*>>;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = loaded->find(candidates);
  if (it == loaded->end()) it = loaded->emplace(candidates, load(candidates)).first;
  return it->second;
}

}  // namespace kforge
