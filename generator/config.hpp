// A configuration: one value for each tunable parameter of a template.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "result.hpp"

namespace kforge {

struct Config {
  std::map<std::string, std::int64_t> values;  ///< sorted by parameter name

  /// Canonical name: sorted NAMEvalue pairs joined by '_', e.g. "BK16_BM64_BN64_TM4_TN4".
  /// It is the DB key, the CLI filter and part of the generated kernel's name.
  std::string canonical_name() const;

  /// Inverse of canonical_name. Parameter names are [A-Z][A-Z0-9]* not ending in
  /// a digit, values are non-negative integers, so the split is unambiguous.
  static Result<Config> parse(std::string_view canonical);

  bool operator==(const Config&) const = default;
};

/// True when `name` is a legal parameter name (see Config::parse).
bool is_valid_parameter_name(std::string_view name);

}  // namespace kforge
