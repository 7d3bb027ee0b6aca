// Dtype and Layout names.
#include "dtype.hpp"

namespace kforge {

std::string_view dtype_name(Dtype d) {
  switch (d) {
    case Dtype::kF32: return "f32";
    case Dtype::kF16: return "f16";
    case Dtype::kBF16: return "bf16";
  }
  return "?";
}

std::optional<Dtype> parse_dtype(std::string_view s) {
  if (s == "f32") return Dtype::kF32;
  if (s == "f16") return Dtype::kF16;
  if (s == "bf16") return Dtype::kBF16;
  return std::nullopt;
}

std::size_t dtype_bytes(Dtype d) { return d == Dtype::kF32 ? 4 : 2; }

double unit_roundoff(Dtype d) {
  switch (d) {
    case Dtype::kF32: return 1.0 / (1 << 24);
    case Dtype::kF16: return 1.0 / (1 << 11);
    case Dtype::kBF16: return 1.0 / (1 << 8);
  }
  return 1.0;
}

std::string Layout::name() const { return std::string(trans_a ? "T" : "N") + (trans_b ? "T" : "N"); }

std::optional<Layout> parse_layout(std::string_view s) {
  if (s.size() != 2) return std::nullopt;
  Layout l;
  for (int i = 0; i < 2; ++i) {
    if (s[i] != 'N' && s[i] != 'T') return std::nullopt;
  }
  l.trans_a = s[0] == 'T';
  l.trans_b = s[1] == 'T';
  return l;
}

}  // namespace kforge
