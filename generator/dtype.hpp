// Element types and operand layouts that operators and templates declare.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kforge {

/// Input element type. Accumulation and outputs are f32 for every dtype.
enum class Dtype { kF32, kF16, kBF16 };

std::string_view dtype_name(Dtype d);              ///< "f32", "f16", "bf16"
std::optional<Dtype> parse_dtype(std::string_view s);
std::size_t dtype_bytes(Dtype d);
/// Unit roundoff of the dtype (2^-24 for f32, 2^-11 for f16, 2^-8 for bf16).
double unit_roundoff(Dtype d);

/// Operand layout as two letters: op(A) then op(B), N = as stored, T = transposed.
/// Storage is always row-major; "T" means the operand is stored transposed.
struct Layout {
  bool trans_a = false;
  bool trans_b = false;
  std::string name() const;  ///< "NN", "NT", "TN", "TT"
  bool operator==(const Layout&) const = default;
};
std::optional<Layout> parse_layout(std::string_view s);

}  // namespace kforge
