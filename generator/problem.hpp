// A problem: one operator applied to concrete dimensions, dtype and layout.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "dtype.hpp"
#include "result.hpp"

namespace kforge {

struct Problem {
  std::string op;                             ///< operator name, e.g. "gemm"
  std::map<std::string, std::int64_t> dims;   ///< e.g. M, N, K, batch
  Dtype dtype = Dtype::kF32;
  Layout layout;

  /// "M=256,N=256,K=256,batch=1" (dims in sorted order).
  std::string dims_string() const;
  /// Unique key: "gemm/M=256,N=256,K=256,batch=1/f32/NN". The DB's problem key.
  std::string key() const;
  std::int64_t dim(const std::string& name) const;  ///< 0 when absent
  bool operator==(const Problem&) const = default;
};

/// Parses "M=256,N=256,K=256" into dims; every value a positive integer.
Result<std::map<std::string, std::int64_t>> parse_dims(std::string_view text);

}  // namespace kforge
