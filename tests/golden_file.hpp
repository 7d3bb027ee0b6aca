// Comparing an output with its golden file under tests/data/golden, with a
// line diff when they differ. KFORGE_UPDATE_GOLDEN=1 rewrites the file
// instead (tests/data/golden/README.md): review its diff before committing.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.hpp"

namespace kforge::test {

inline std::vector<std::string> golden_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// A line diff of `expected` against `actual` ("-" expected only, "+"
/// actual only), from their longest common subsequence, with two lines of
/// context around each change and at most `max_lines` lines.
inline std::string golden_diff(const std::string& expected, const std::string& actual,
                               std::size_t max_lines = 60) {
  const auto e = golden_lines(expected), a = golden_lines(actual);
  // common[i][j]: the longest common subsequence of e[i..] and a[j..].
  std::vector<std::vector<std::size_t>> common(e.size() + 1, std::vector<std::size_t>(a.size() + 1, 0));
  for (std::size_t i = e.size(); i-- > 0;) {
    for (std::size_t j = a.size(); j-- > 0;) {
      common[i][j] = e[i] == a[j] ? common[i + 1][j + 1] + 1 : std::max(common[i + 1][j], common[i][j + 1]);
    }
  }
  struct Line {
    char mark;
    std::size_t number;  ///< in the expected file, from 1
    std::string text;
  };
  std::vector<Line> lines;
  std::size_t i = 0, j = 0;
  while (i < e.size() || j < a.size()) {
    if (i < e.size() && j < a.size() && e[i] == a[j]) {
      lines.push_back({' ', i + 1, e[i]});
      ++i, ++j;
    } else if (i < e.size() && (j == a.size() || common[i + 1][j] >= common[i][j + 1])) {
      lines.push_back({'-', i + 1, e[i]});
      ++i;
    } else {
      lines.push_back({'+', i + 1, a[j]});
      ++j;
    }
  }
  std::ostringstream out;
  std::size_t shown = 0, last = 0;
  for (std::size_t k = 0; k < lines.size() && shown < max_lines; ++k) {
    const auto near_change = [&](std::size_t at) {
      for (std::size_t d = (at >= 2 ? at - 2 : 0); d <= std::min(lines.size() - 1, at + 2); ++d)
        if (lines[d].mark != ' ') return true;
      return false;
    };
    if (!near_change(k)) continue;
    if (shown > 0 && k > last + 1) out << "...\n";
    out << lines[k].mark << " " << lines[k].number << ": " << lines[k].text << "\n";
    last = k;
    ++shown;
  }
  return out.str();
}

/// Checks `actual` against tests/data/golden/`name`.
inline void check_golden_file(const std::string& name, const std::string& actual) {
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
  if (golden_lines(expected) == golden_lines(actual))
    FAIL("outputs differ in line endings or the final newline");
  FAIL("output differs from the golden file (- expected, + actual, expected line numbers):\n"
       << golden_diff(expected, actual));
}

}  // namespace kforge::test
