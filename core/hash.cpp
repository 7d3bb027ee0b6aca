// FNV-1a 64-bit hashing.
#include "core/hash.hpp"

#include <cstdio>

namespace kforge {

Hasher& Hasher::add(std::string_view bytes) {
  constexpr std::uint64_t kPrime = 1099511628211ull;
  for (unsigned char c : bytes) {
    h_ ^= c;
    h_ *= kPrime;
  }
  h_ ^= 0xffu;  // separator
  h_ *= kPrime;
  return *this;
}

std::string Hasher::hex() const {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h_));
  return buf;
}

std::string hash_hex(std::string_view bytes) { return Hasher().add(bytes).hex(); }

}  // namespace kforge
