#include "tuner/measure/reference_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "core/hash.hpp"

namespace kforge {

namespace {

constexpr char kMagic[8] = {'K', 'F', 'R', 'E', 'F', '0', '0', '1'};

/// FNV-1a 64 over 8-byte words: a byte-wise pass over the 256 MiB of a
/// 4096^2 reference would cost a good part of what the file saves.
class WordChecksum {
 public:
  void add(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i + 8 <= bytes; i += 8) {
      std::uint64_t w;
      std::memcpy(&w, p + i, 8);
      h_ = (h_ ^ w) * 1099511628211ull;
    }
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 1469598103934665603ull;
};

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

Error file_error(const std::string& path, const std::string& what) {
  return Error{ErrorCode::kBadInput, path + ": " + what, {}};
}

}  // namespace

std::uint64_t reference_key(const Problem& problem, std::uint64_t workload_seed, WorkloadKind kind) {
  return Hasher()
      .add(problem.key())
      .add(std::to_string(workload_seed))
      .add(kind == WorkloadKind::kPoisonedOutput ? "poisoned-output" : "accumulate")
      .value();
}

Status save_reference(const std::string& path, std::uint64_t key, const Reference& reference) {
  if (reference.scale.size() != reference.value.size()) {
    return Error::internal(path + ": reference has " + std::to_string(reference.value.size()) + " values and " +
                           std::to_string(reference.scale.size()) + " scales");
  }
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    File f(std::fopen(tmp.c_str(), "wb"));
    if (!f) return file_error(tmp, std::string("cannot create: ") + std::strerror(errno));
    const std::uint64_t count = reference.value.size();
    WordChecksum sum;
    bool ok = true;
    auto put = [&](const void* data, std::size_t bytes) {
      sum.add(data, bytes);
      ok = ok && std::fwrite(data, 1, bytes, f.get()) == bytes;
    };
    put(kMagic, sizeof kMagic);
    put(&key, 8);
    put(&count, 8);
    put(&reference.tolerance, 8);
    put(reference.value.data(), count * 8);
    put(reference.scale.data(), count * 8);
    const std::uint64_t checksum = sum.value();
    ok = ok && std::fwrite(&checksum, 1, 8, f.get()) == 8;
    ok = std::fclose(f.release()) == 0 && ok;
    if (!ok) {
      const int err = errno;
      std::remove(tmp.c_str());
      return file_error(tmp, std::string("cannot write: ") + std::strerror(err));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return file_error(path, std::string("cannot rename into place: ") + std::strerror(err));
  }
  return ok_status();
}

Result<Reference> load_reference(const std::string& path, std::uint64_t key) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f && errno == ENOENT) return Error::not_found(path + ": no reference file");
  if (!f) return file_error(path, std::string("cannot open: ") + std::strerror(errno));
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return file_error(path, "cannot read its size: " + ec.message());
  constexpr std::uint64_t kHeader = 32;  // magic, key, count, tolerance
  if (size < kHeader + 8) return file_error(path, "truncated: " + std::to_string(size) + " bytes");
  char magic[8];
  std::uint64_t file_key = 0, count = 0;
  double tolerance = 0;
  WordChecksum sum;
  auto get = [&](void* data, std::size_t bytes) {
    if (std::fread(data, 1, bytes, f.get()) != bytes) return false;
    sum.add(data, bytes);
    return true;
  };
  if (!get(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) return file_error(path, "not a kforge reference file");
  if (!get(&file_key, 8) || !get(&count, 8) || !get(&tolerance, 8)) return file_error(path, "truncated header");
  if (file_key != key) return file_error(path, "holds the reference of another problem, seed or validation run");
  const std::uint64_t expected = kHeader + 16 * count + 8;
  if (count > size || size != expected) {
    return file_error(path, "size " + std::to_string(size) + " bytes, expected " + std::to_string(expected) +
                                " for " + std::to_string(count) + " elements");
  }
  Reference r;
  r.tolerance = tolerance;
  r.value.resize(count);
  r.scale.resize(count);
  std::uint64_t checksum = 0;
  if (!get(r.value.data(), count * 8) || !get(r.scale.data(), count * 8) ||
      std::fread(&checksum, 1, 8, f.get()) != 8) {
    return file_error(path, "truncated");
  }
  if (checksum != sum.value()) return file_error(path, "checksum mismatch: the file is corrupt");
  return r;
}

}  // namespace kforge
