// A configuration: one value for each tunable parameter of a template.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace kforge {

struct Config {
  std::map<std::string, std::int64_t> values;  ///< sorted by parameter name

  /// Canonical name: sorted NAMEvalue pairs joined by '_', e.g. "BK16_BM64_BN64_TM4_TN4".
  /// It is the DB key, the CLI filter and part of the generated kernel's name.
  std::string canonical_name() const;

  /// Inverse of canonical_name. Parameter names (is_valid_parameter_name)
  /// never have a digit before '_' or at the end and values are non-negative
  /// integers, so "block_size_x16_tile_x2" splits one way only.
  static Result<Config> parse(std::string_view canonical);

  bool operator==(const Config&) const = default;
};

/// True when `name` is a legal parameter name: a C identifier of letters,
/// digits and single '_' between them (block_size_x, BM), starting with a
/// letter, with no digit before a '_' or at the end (see Config::parse).
bool is_valid_parameter_name(std::string_view name);

/// The rule above in words, for error messages.
inline constexpr std::string_view kParameterNameRule =
    "a C identifier of letters, digits and single '_', starting with a letter, with no digit before "
    "'_' or at the end, so that configuration names such as block_size_x16_tile_x2 split one way";

}  // namespace kforge
