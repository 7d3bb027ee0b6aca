// Dtype and Layout names.
#include "core/dtype.hpp"

#include <array>

namespace kforge {

namespace {

struct DtypeFacts {
  Dtype dtype;
  std::string_view name;
  std::size_t bytes;
  double roundoff;  ///< 0: an integer type
  bool problem;     ///< may be a problem's dtype
};

constexpr std::array<DtypeFacts, 7> kDtypes{{
    {Dtype::kF32, "f32", 4, 1.0 / (1 << 24), true},
    {Dtype::kF16, "f16", 2, 1.0 / (1 << 11), true},
    {Dtype::kBF16, "bf16", 2, 1.0 / (1 << 8), true},
    {Dtype::kF64, "f64", 8, 1.0 / 9007199254740992.0, false},
    {Dtype::kI32, "i32", 4, 0.0, false},
    {Dtype::kI8, "i8", 1, 0.0, false},
    {Dtype::kU8, "u8", 1, 0.0, false},
}};

const DtypeFacts& facts(Dtype d) {
  for (const DtypeFacts& f : kDtypes) {
    if (f.dtype == d) return f;
  }
  return kDtypes.front();
}

}  // namespace

std::string_view dtype_name(Dtype d) {
  return facts(d).name;
}

std::optional<Dtype> parse_element_dtype(std::string_view s) {
  for (const DtypeFacts& f : kDtypes) {
    if (f.name == s) return f.dtype;
  }
  return std::nullopt;
}

std::optional<Dtype> parse_dtype(std::string_view s) {
  auto d = parse_element_dtype(s);
  if (d && !is_problem_dtype(*d)) return std::nullopt;
  return d;
}

std::string_view problem_dtype_names() {
  return "f32, f16, bf16";
}
std::string_view element_dtype_names() {
  return "f32, f16, bf16, f64, i32, i8, u8";
}

bool is_problem_dtype(Dtype d) {
  return facts(d).problem;
}
bool is_integer(Dtype d) {
  return facts(d).roundoff == 0.0;
}
std::size_t dtype_bytes(Dtype d) {
  return facts(d).bytes;
}
double unit_roundoff(Dtype d) {
  return facts(d).roundoff;
}

std::string Layout::name() const {
  return std::string(trans_a ? "T" : "N") + (trans_b ? "T" : "N");
}

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
