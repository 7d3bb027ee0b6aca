// Golden-file checks for the export, compare and capabilities outputs:
// tests/data/golden/NAME holds the expected text. Run a test with
// KFORGE_UPDATE_GOLDEN=1 to rewrite the files after an intended change, then
// review the diff (tests/data/golden/README.md).
#pragma once

#include <regex>
#include <string>

#include "tests/golden_file.hpp"
#include "tests/tools/tools_fixtures.hpp"

namespace kforge::test {

/// Replaces what legitimately changes between builds: template hashes (they
/// cover the template and prelude text) and the exporting kforge's version.
inline std::string normalize_for_golden(std::string text) {
  for (const auto& [hash, placeholder] : fixture_hash_placeholders()) {
    for (std::size_t pos = text.find(hash); pos != std::string::npos; pos = text.find(hash, pos + placeholder.size()))
      text.replace(pos, hash.size(), placeholder);
  }
  static const std::regex exported_by("\"exported_by\": \"[^\"]*\"");
  return std::regex_replace(text, exported_by, "\"exported_by\": \"@KFORGE@\"");
}

inline void check_golden(const std::string& name, const std::string& raw) {
  check_golden_file(name, normalize_for_golden(raw));
}

}  // namespace kforge::test
