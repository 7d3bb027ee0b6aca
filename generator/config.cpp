// Canonical configuration names: sorted NAMEvalue pairs joined by '_'.
#include "generator/config.hpp"

#include <cctype>
#include <charconv>

#include "core/printable.hpp"

namespace kforge {

bool is_valid_parameter_name(std::string_view name) {
  if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0]))) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool digit = c >= '0' && c <= '9';
    if (!(std::isalpha(static_cast<unsigned char>(c)) || digit || c == '_')) return false;
    const bool last = i + 1 == name.size();
    // A digit before '_' or at the end would be read as the value.
    if (digit && (last || name[i + 1] == '_')) return false;
    if (c == '_' && (last || name[i + 1] == '_')) return false;
  }
  return true;
}

std::string Config::canonical_name() const {
  std::string s;
  for (const auto& [name, value] : values) {
    if (!s.empty()) s += '_';
    s += name;
    s += std::to_string(value);
  }
  return s;
}

Result<Config> Config::parse(std::string_view canonical) {
  auto fail = [&](std::string_view token, const std::string& why) {
    return Error::bad_input("configuration name '" + printable(canonical) + "': '" + printable(token) +
                            "': " + why);
  };
  if (canonical.empty()) {
    return Error::bad_input("configuration name is empty (expected e.g. BK16_BM64)");
  }
  Config c;
  std::string previous;
  bool sorted = true;
  std::size_t pos = 0;
  std::string pending;  // segments of a name with '_' inside, e.g. "block_size_" of block_size_x16
  while (pos <= canonical.size()) {
    std::size_t end = canonical.find('_', pos);
    if (end == std::string_view::npos) end = canonical.size();
    const std::string token = pending + std::string(canonical.substr(pos, end - pos));
    pos = end + 1;
    // Names never have a digit before '_' or at the end, so a segment ending
    // in digits ends a pair, and the value is exactly its trailing digits.
    std::size_t last_name_char = token.find_last_not_of("0123456789");
    const bool ends_in_digit = last_name_char + 1 != token.size();
    if (!ends_in_digit && end != canonical.size() && token.size() > pending.size()) {
      pending = token + '_';
      continue;
    }
    pending.clear();
    if (last_name_char == std::string::npos || !ends_in_digit) {
      return fail(token, "expected NAMEvalue, e.g. BM64");
    }
    const std::size_t digits = last_name_char + 1;
    std::string_view name = std::string_view(token).substr(0, digits);
    std::string_view number = std::string_view(token).substr(digits);
    if (!is_valid_parameter_name(name)) {
      return fail(token, std::string("'").append(printable(name)) + "' is not a parameter name (" +
                             std::string(kParameterNameRule) + ")");
    }
    std::int64_t value = 0;
    auto [end_ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec != std::errc() || end_ptr != number.data() + number.size()) {
      return fail(token, "value '" + std::string(number) + "' is not a 64-bit non-negative integer");
    }
    if (number.size() > 1 && number[0] == '0') {
      return fail(token, "value has a leading zero (canonical form: " + std::string(name) +
                             std::to_string(value) + ")");
    }
    if (!c.values.emplace(std::string(name), value).second) {
      return fail(token, "parameter " + std::string(name) + " appears twice");
    }
    sorted = sorted && (previous.empty() || std::string_view(previous) < name);
    previous = std::string(name);
  }
  if (!sorted) {
    return Error::bad_input("configuration name '" + printable(canonical) +
                            "': parameters are not in sorted order (canonical form: " + c.canonical_name() +
                            ")");
  }
  return c;
}

}  // namespace kforge
