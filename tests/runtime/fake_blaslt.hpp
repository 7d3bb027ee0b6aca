// What the fake cuBLASLt and hipBLASLt (fake_cublaslt.cpp, fake_hipblaslt.cpp)
// have in common: descriptors and layouts as plain structs, the algorithms
// their heuristic offers, and the column-major matmul itself, computed on
// the fake GPU's memory (host addresses, fake_gpu_driver.hpp). Each library
// maps its own enum values and status codes onto these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/float_convert.hpp"

namespace kforge::test::fake_blaslt {

/// cudaDataType_t and hipDataType agree on the three kforge uses.
enum DataType : int { kR32F = 0, kR16F = 2, kR16BF = 14 };

/// A matrix as the library stores it: column-major, `batch` of them `stride` elements apart.
struct Layout {
  int type = kR32F;
  std::uint64_t rows = 0, cols = 0;
  std::int64_t ld = 0;
  std::int32_t batch = 1;
  std::int64_t stride = 0;
};

/// A matmul descriptor: compute and scale types, op(A), op(B) and the epilogue.
struct Desc {
  int compute = 0, scale = 0;
  bool trans_a = false, trans_b = false;
  bool relu = false;
  const float* bias = nullptr;  ///< added to each row of D where set
  bool bias_epilogue = false;
};

/// The algorithms the heuristic offers, each with the workspace it needs:
/// more than one, so that an index into them means something.
inline constexpr std::size_t kAlgoWorkspace[] = {0, 4096, std::size_t{1} << 20};
inline constexpr int kAlgoCount = 3;

/// cublasLtEpilogue_t and hipblasLtEpilogue_t agree on the four kforge sets.
enum Epilogue : unsigned {
  kEpilogueDefault = 1,
  kEpilogueRelu = 2,
  kEpilogueBias = 4,
  kEpilogueReluBias = 6
};

struct Handle {
  int magic = 0x17;
};
struct Preference {
  std::uint64_t max_workspace = 0;
};

/// An attribute's value, where `size` is its type's.
template <typename T>
bool read(const void* buf, std::size_t size, T& out) {
  if (size != sizeof out) return false;
  std::memcpy(&out, buf, sizeof out);
  return true;
}

inline bool set_epilogue(Desc& d, unsigned e) {
  if (e != kEpilogueDefault && e != kEpilogueRelu && e != kEpilogueBias && e != kEpilogueReluBias)
    return false;
  d.relu = e == kEpilogueRelu || e == kEpilogueReluBias;
  d.bias_epilogue = e == kEpilogueBias || e == kEpilogueReluBias;
  return true;
}

inline bool valid_type(int t) {
  return t == kR32F || t == kR16F || t == kR16BF;
}

inline bool valid_layout(const Layout& l) {
  return valid_type(l.type) && l.rows > 0 && l.cols > 0 && l.ld >= static_cast<std::int64_t>(l.rows) &&
         l.batch >= 1;
}

/// Whether op(A) (m x k), op(B) (k x n), C and D (m x n) agree, with A and B
/// of one input type and C and D in f32 (what this fake computes).
inline bool shapes_agree(const Desc& d, const Layout& a, const Layout& b, const Layout& c, const Layout& o) {
  if (!valid_layout(a) || !valid_layout(b) || !valid_layout(c) || !valid_layout(o)) return false;
  const std::uint64_t m = d.trans_a ? a.cols : a.rows, k = d.trans_a ? a.rows : a.cols;
  const std::uint64_t kb = d.trans_b ? b.cols : b.rows, n = d.trans_b ? b.rows : b.cols;
  return k == kb && c.rows == m && c.cols == n && o.rows == m && o.cols == n && a.type == b.type &&
         c.type == kR32F && o.type == kR32F && a.batch == c.batch && b.batch == c.batch && o.batch == c.batch;
}

inline float element(const Layout& l, const void* base, std::int64_t index) {
  std::uint16_t bits = 0;
  if (l.type == kR32F) {
    float f = 0;
    std::memcpy(&f, static_cast<const float*>(base) + index, sizeof f);
    return f;
  }
  std::memcpy(&bits, static_cast<const std::uint16_t*>(base) + index, sizeof bits);
  return l.type == kR16F ? half_bits_to_float(bits) : bf16_bits_to_float(bits);
}

/// op(X)[r][c] of batch q, X stored column-major.
inline float op_element(const Layout& l, const void* x, bool trans, std::int32_t q, std::uint64_t r,
                        std::uint64_t c) {
  const auto row = static_cast<std::int64_t>(trans ? c : r), col = static_cast<std::int64_t>(trans ? r : c);
  return element(l, x, q * l.stride + row + col * l.ld);
}

/// D = epilogue(alpha op(A) op(B) + beta C) with f32 accumulation; C is not
/// read where beta is 0, as BLAS promises (it may hold NaN).
inline void matmul(const Desc& d, float alpha, const void* a, const Layout& la, const void* b,
                   const Layout& lb, float beta, const float* c, const Layout& lc, float* out,
                   const Layout& lo) {
  const std::uint64_t m = lc.rows, n = lc.cols, k = d.trans_a ? la.rows : la.cols;
  for (std::int32_t q = 0; q < lc.batch; ++q)
    for (std::uint64_t j = 0; j < n; ++j)
      for (std::uint64_t i = 0; i < m; ++i) {
        float sum = 0;
        for (std::uint64_t l = 0; l < k; ++l)
          sum += op_element(la, a, d.trans_a, q, i, l) * op_element(lb, b, d.trans_b, q, l, j);
        float v = alpha * sum;
        if (beta != 0) v += beta * c[q * lc.stride + static_cast<std::int64_t>(i + j * lc.ld)];
        if (d.bias_epilogue) v += d.bias[i];
        if (d.relu && v < 0) v = 0;
        out[q * lo.stride + static_cast<std::int64_t>(i + j * lo.ld)] = v;
      }
}

}  // namespace kforge::test::fake_blaslt
