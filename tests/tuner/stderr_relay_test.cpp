// The worker's stderr relay leaves out clang's bare diagnostic counts only.
#include "tuner/worker/stderr_relay.hpp"

#include <catch2/catch.hpp>

TEST_CASE("the compiler's bare diagnostic counts are recognized, nothing else", "[worker]") {
  using kforge::is_diagnostic_count;
  for (const char* line : {"1 warning generated.", "2 warnings generated.", "1 error generated.",
                           "2 warnings and 1 error generated.", "12 warnings and 3 errors generated."}) {
    INFO(line);
    CHECK(is_diagnostic_count(line));
  }
  for (const char* line : {"", "warning generated.", "2 warnings generated", "2 warnings generated. ",
                           "x 2 warnings generated.", "2 warnings and generated.",
                           "kernel.cl:3:5: warning: unused variable 'x'", "Aborted (core dumped)"}) {
    INFO(line);
    CHECK_FALSE(is_diagnostic_count(line));
  }
}
