// The test level chooses sweep sizes: KFORGE_TEST_LEVEL=quick|core|full
// (default core, what CI runs; full is the long tier asked for by hand).
#pragma once

#include <cstdlib>
#include <string_view>

namespace kforge::test {

enum class TestLevel { kQuick = 0, kCore = 1, kFull = 2 };

inline TestLevel test_level() {
  const char* v = std::getenv("KFORGE_TEST_LEVEL");
  const std::string_view s = v ? v : "core";
  if (s == "quick") return TestLevel::kQuick;
  if (s == "full") return TestLevel::kFull;
  return TestLevel::kCore;
}

}  // namespace kforge::test
