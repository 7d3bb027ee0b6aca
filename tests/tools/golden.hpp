// Golden-file checks for the export, compare and capabilities outputs:
// tests/data/golden/NAME holds the expected text. Run a test with
// KFORGE_UPDATE_GOLDEN=1 to rewrite the files after an intended change, then
// review the diff (tests/data/golden/README.md).
#pragma once

#include <catch2/catch.hpp>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <string>

#include "test_util.hpp"
#include "tools_fixtures.hpp"

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
  const std::string actual = normalize_for_golden(raw);
  const std::string path = std::string(KFORGE_TEST_DATA_DIR) + "/golden/" + name;
  if (const char* u = std::getenv("KFORGE_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    write_file(path, actual);
    WARN("rewrote " << path);
    return;
  }
  const std::string expected = read_file(path);
  INFO("golden file " << path << " (KFORGE_UPDATE_GOLDEN=1 rewrites it)");
  REQUIRE_FALSE(expected.empty());
  if (expected == actual) return;
  std::istringstream e(expected), a(actual);
  std::string le, la;
  int line = 0;
  while (true) {
    ++line;
    const bool more_e = static_cast<bool>(std::getline(e, le));
    const bool more_a = static_cast<bool>(std::getline(a, la));
    if (!more_e && !more_a) break;
    if (le != la || more_e != more_a) {
      FAIL("first difference at line " << line << "\nexpected: " << le << "\nactual:   " << la);
    }
  }
  FAIL("outputs differ (line endings?)");
}

}  // namespace kforge::test
