// Exact cartesian size: a 64-bit product with an overflow check, and the
// decimal digits from a product in base 10^9 limbs.
#include "generator/cartesian_size.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <vector>

namespace kforge {

namespace {

constexpr std::uint64_t kLimb = 1000000000;

/// limbs (least significant first, base 10^9) *= factor, factor < 2^32 (a
/// count of declared values): limb * factor + carry stays below 2^63.
void multiply(std::vector<std::uint64_t>& limbs, std::uint64_t factor) {
  std::uint64_t carry = 0;
  for (auto& limb : limbs) {
    const std::uint64_t x = limb * factor + carry;
    limb = x % kLimb;
    carry = x / kLimb;
  }
  while (carry > 0) {
    limbs.push_back(carry % kLimb);
    carry /= kLimb;
  }
}

std::string to_decimal(const std::vector<std::uint64_t>& limbs) {
  std::size_t top = limbs.size();
  while (top > 1 && limbs[top - 1] == 0) --top;
  std::string out = std::to_string(limbs[top - 1]);
  for (std::size_t i = top - 1; i-- > 0;) {
    char digits[16];
    std::snprintf(digits, sizeof digits, "%09llu", static_cast<unsigned long long>(limbs[i]));
    out += digits;
  }
  return out;
}

}  // namespace

CartesianSize cartesian_size(const TemplateManifest& manifest) {
  CartesianSize size;
  std::vector<std::uint64_t> limbs{1};
  for (const auto& p : manifest.parameters) {
    const auto n = static_cast<std::uint64_t>(p.values.size());
    multiply(limbs, n);
    if (!size.overflows && __builtin_mul_overflow(size.value, n, &size.value)) size.overflows = true;
  }
  if (size.overflows) size.value = std::numeric_limits<std::uint64_t>::max();
  size.decimal = to_decimal(limbs);
  return size;
}

}  // namespace kforge
