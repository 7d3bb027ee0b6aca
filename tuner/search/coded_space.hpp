// A space as a table of value codes: per parameter its distinct values, per
// configuration the position of its value in each. Two bytes a cell, so a
// strategy's view of a space of 10^7 configurations fits in memory, and an
// index by codes finds a configuration's one-parameter neighbors without
// listing them for every configuration.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "tuner/search/strategy.hpp"

namespace kforge {

class CodedSpace {
 public:
  CodedSpace() = default;
  /// `values[d]`: column d's distinct values, ascending; `codes`: row-major,
  /// `values.size()` codes a configuration, each below its column's size.
  /// Rows must be distinct.
  CodedSpace(std::vector<std::vector<double>> values, std::vector<std::uint16_t> codes);
  /// The coded form of a feature table (one row per configuration).
  static CodedSpace from_features(const SpaceFeatures& raw);

  std::size_t size() const { return size_; }
  std::size_t dims() const { return values_.size(); }
  std::uint16_t code(std::size_t i, std::size_t d) const { return codes_[i * dims() + d]; }
  double value(std::size_t i, std::size_t d) const { return values_[d][code(i, d)]; }
  const std::vector<double>& values(std::size_t d) const { return values_[d]; }
  /// The configuration whose codes are `row` (dims() of them), if any.
  std::optional<std::size_t> find(const std::uint16_t* row) const;
  /// The configurations that differ from `i` in exactly one column, ascending.
  std::vector<std::size_t> neighbors(std::size_t i) const;

 private:
  std::uint64_t hash_row(const std::uint16_t* row) const;
  void build_index();

  std::vector<std::vector<double>> values_;
  std::vector<std::uint16_t> codes_;
  std::size_t size_ = 0;
  std::vector<std::uint32_t> slots_;  ///< open addressing: configuration + 1, 0 empty
};

}  // namespace kforge
