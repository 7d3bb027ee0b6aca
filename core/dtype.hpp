// Element types and operand layouts that operators and templates declare.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kforge {

/// Element type of a buffer. A problem's dtype (its inputs' type) is one of
/// the first three; built-in operators accumulate and store outputs in f32.
/// A declared operator's buffer may have any of them (operator.json).
enum class Dtype { kF32, kF16, kBF16, kF64, kI32, kI8, kU8 };

std::string_view dtype_name(Dtype d);  ///< "f32", "f16", "bf16", "f64", "i32", "i8", "u8"
/// A problem's dtype: f32, f16 or bf16; nullopt for any other name.
std::optional<Dtype> parse_dtype(std::string_view s);
/// Any element type, the problem dtypes included.
std::optional<Dtype> parse_element_dtype(std::string_view s);
/// "f32, f16, bf16" and "f32, f16, bf16, f64, i32, i8, u8", for error messages.
std::string_view problem_dtype_names();
std::string_view element_dtype_names();
bool is_problem_dtype(Dtype d);
bool is_integer(Dtype d);
std::size_t dtype_bytes(Dtype d);
/// Unit roundoff of the dtype (2^-24 for f32, 2^-11 for f16, 2^-8 for bf16,
/// 2^-53 for f64); 0 for the integer types, which hold every value exactly.
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
