// NumPy .npy files (format versions 1-3): fixed inputs and expected outputs
// of a declared operator. Little-endian f2, f4, f8, i1, u1, i4 and i8, C order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace kforge {

struct NpyArray {
  std::string descr;                 ///< as stored: "<f4", "<f8", ...
  std::vector<std::uint64_t> shape;  ///< empty for a scalar
  std::vector<double> values;        ///< every element widened to double, C order

  std::uint64_t elements() const;
  bool is_integer() const { return descr.size() == 3 && (descr[1] == 'i' || descr[1] == 'u'); }
  std::string shape_text() const;  ///< "(3, 4)", as NumPy writes it
};

/// Reads `path`. Errors name the file and what is wrong with it (magic,
/// header, dtype, Fortran order, a size that disagrees with the shape).
Result<NpyArray> read_npy(const std::string& path);
/// The same for a file's bytes already read; `path` names it in errors.
Result<NpyArray> parse_npy(std::string_view bytes, const std::string& path);

/// Writes `values` as a 1-D array of `descr` ("<f4", "<f8" or "<i4").
Status write_npy(const std::string& path, const std::vector<double>& values,
                 const std::string& descr = "<f8");

}  // namespace kforge
