// The on-disk cache of compiled kernels, shared by the tuner (later sweeps
// skip the compiler) and the runtime lookup (a process start skips it too).
//
// One file per entry under DIR/<2 hex>/<32 hex>.bin, named by a digest of
// the key. Writers write a temporary file in the same directory and rename
// it over the entry, so concurrent processes never see half an entry. Every
// entry carries its full key text and a checksum: an entry that is
// truncated, altered or from another key is treated as a miss, removed, and
// counted in stats().corrupt, so the caller compiles and puts it again.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/result.hpp"
#include "generator/instance.hpp"
#include "generator/problem.hpp"
#include "runtime/device/backend.hpp"

namespace kforge {

/// Version of the entry layout and of the key's fields. Bump it when either
/// changes: entries of another version are misses (and are overwritten).
inline constexpr int kBinaryCacheFormat = 1;

/// What a compiled binary depends on (docs/architecture.md, "Identity").
struct BinaryCacheKey {
  std::string template_hash;  ///< source + manifest + prelude (TemplateSource::hash)
  std::string config;         ///< canonical configuration name
  std::string dtype, layout;  ///< the problem type the instance was generated for
  std::string variant;        ///< other problem choices baked into the source (epilogue, attributes); may be ""
  std::string backend, arch;  ///< target: "opencl" + "x86_64-haswell", "cuda" + "sm_90"
  std::string compiler, compiler_version;
  std::string options;        ///< compiler options as passed to Compiler::compile
  /// Hash of the exact source text. Redundant with the fields above by
  /// design: a generator change that alters the source without changing them
  /// still gets a new entry.
  std::string source_hash;

  /// The canonical text of every field; stored in the entry and compared on read.
  std::string text() const;
  /// 32 lowercase hex digits naming the entry's file.
  std::string digest() const;
};

/// The key for `instance` generated from a template whose hash is
/// `template_hash`, for `problem` on `device`, compiled with `options`.
BinaryCacheKey make_cache_key(const std::string& template_hash, const Instance& instance,
                              const Problem& problem, const DeviceInfo& device,
                              const std::string& options);

class BinaryCache {
 public:
  struct Stats {
    std::int64_t hits = 0, misses = 0, corrupt = 0, writes = 0;
  };

  /// Opens (creating it if needed) the cache directory `dir`. Fails with
  /// kBadInput naming `dir` when it cannot be created or is not writable.
  static Result<BinaryCache> open(const std::string& dir);
  /// $KFORGE_CACHE_DIR, else $XDG_CACHE_HOME/kforge/binaries, else
  /// $HOME/.cache/kforge/binaries, else /tmp/kforge-binaries.
  static std::string default_dir();

  BinaryCache(BinaryCache&& other) noexcept;
  BinaryCache& operator=(BinaryCache&&) = delete;

  /// The stored kernel, or nullopt on a miss. A corrupt entry (bad magic,
  /// version, length, checksum, or another key's text) is removed and reported
  /// as a miss. Safe from many threads and processes.
  std::optional<CompiledKernel> get(const BinaryCacheKey& key);
  /// Stores `kernel` under `key`, replacing any entry. Atomic for readers.
  Status put(const BinaryCacheKey& key, const CompiledKernel& kernel);
  /// Which compiled kernels get_or_compile stores.
  enum class Store {
    kAlways,    ///< every one, fetching a deferred binary (CompiledKernel::fetch_binary)
    kWhenFree,  ///< only those whose binary came with the compile (NVRTC, hipRTC), not deferred ones
  };
  /// get, or else compile() and put its result per `store` (a failed compile
  /// is not cached). `hit` (optional) says which happened.
  Result<CompiledKernel> get_or_compile(const BinaryCacheKey& key,
                                        const std::function<Result<CompiledKernel>()>& compile,
                                        bool* hit = nullptr, Store store = Store::kAlways);

  /// Path of the entry for `key` (present or not), for tests and tools.
  std::string entry_path(const BinaryCacheKey& key) const;
  /// "<2 hex>/<digest>.bin": where the entry of `digest` sits under a cache directory.
  static std::string relative_path(const std::string& digest);
  /// Whether `text` is a digest (BinaryCacheKey::digest): 32 lowercase hex digits.
  static bool is_digest(const std::string& text);
  const std::string& dir() const { return dir_; }
  Stats stats() const;

 private:
  explicit BinaryCache(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
  std::atomic<std::int64_t> hits_{0}, misses_{0}, corrupt_{0}, writes_{0};
};

}  // namespace kforge
