// Stable content hashing for template hashes, cache keys and fingerprints.
// FNV-1a 64: not cryptographic, stable across platforms and compilers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kforge {

class Hasher {
 public:
  /// Feeds bytes, then a separator so that ("ab","c") and ("a","bc") differ.
  Hasher& add(std::string_view bytes);
  std::uint64_t value() const { return h_; }
  /// 16 lowercase hex digits.
  std::string hex() const;

 private:
  std::uint64_t h_ = 1469598103934665603ull;
};

std::string hash_hex(std::string_view bytes);

}  // namespace kforge
