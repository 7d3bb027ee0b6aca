// reduce_tiled on PoCL: sum and max, last axis and whole tensor, one pass and
// split (last-block-done), f32/f16/bf16, shapes 1, primes, tails around the
// block and vector sizes, long rows; boundary rows; NaN propagation for max.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "coverage_runner.hpp"
#include "test_level.hpp"

using namespace kforge;

namespace {

Problem reduce_problem(std::int64_t rows, std::int64_t cols, const char* kind, const char* axis,
                       Dtype dtype = Dtype::kF32) {
  return Problem{"reduce", {{"rows", rows}, {"cols", cols}}, dtype, {}, {}, {{"kind", kind}, {"axis", axis}}};
}

std::vector<std::array<std::int64_t, 2>> shapes() {
  // Split configurations need length >= SPLIT (the manifest's constraint).
  std::vector<std::array<std::int64_t, 2>> s = {{1, 8}, {3, 11}, {5, 63}, {2, 64}, {7, 65}, {1, 1031}, {9, 257}};
  if (test::test_level() >= test::TestLevel::kCore) s.push_back({3, 70001});  // long rows
  if (test::test_level() >= test::TestLevel::kFull) {
    s.push_back({1024, 13});   // many short rows
    s.push_back({1, 1 << 20});  // one very long row
  }
  return s;
}

void check(const char* config, Dtype dtype, const char* kind, const char* axis) {
  test::CoverageRunner runner("reduce_tiled", config);
  for (const auto& [rows, cols] : shapes()) {
    for (auto run : {WorkloadKind::kPoisonedOutput, WorkloadKind::kAccumulate}) {
      const std::string failure = runner.run(reduce_problem(rows, cols, kind, axis, dtype), run);
      if (!failure.empty()) {
        FAIL_CHECK(failure);
        return;
      }
    }
  }
  SUCCEED();
}

}  // namespace

TEST_CASE("reduce_tiled: a single element", "[opencl][reduce]") {
  test::CoverageRunner runner("reduce_tiled", "BLOCK64_SPLIT1_VW1_WPT2");
  for (const char* kind : {"sum", "max"}) {
    CHECK(runner.run(reduce_problem(1, 1, kind, "last"), WorkloadKind::kPoisonedOutput) == "");
    CHECK(runner.run(reduce_problem(1, 1, kind, "all"), WorkloadKind::kAccumulate) == "");
  }
}

TEST_CASE("reduce_tiled: one pass and split, sum and max, both axes", "[opencl][reduce]") {
  for (const char* config : {"BLOCK64_SPLIT1_VW1_WPT2", "BLOCK32_SPLIT8_VW4_WPT4"}) {
    for (const char* kind : {"sum", "max"}) {
      for (const char* axis : {"last", "all"}) {
        SECTION(std::string(config) + " " + kind + " " + axis) { check(config, Dtype::kF32, kind, axis); }
      }
    }
  }
}

TEST_CASE("reduce_tiled: f16 and bf16 inputs", "[opencl][reduce]") {
  for (Dtype dtype : {Dtype::kF16, Dtype::kBF16}) {
    SECTION(std::string(dtype_name(dtype))) { check("BLOCK128_SPLIT4_VW2_WPT1", dtype, "sum", "last"); }
  }
}

TEST_CASE("reduce_tiled: max propagates NaN, sum follows IEEE", "[opencl][reduce]") {
  test::CoverageRunner runner("reduce_tiled", "BLOCK32_SPLIT8_VW4_WPT4");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* kind : {"max", "sum"}) {
    INFO(kind);
    // Row 1 holds a NaN, row 2 an infinity.
    auto plant = [&](Workload& w) {
      w.tensors[0].f32()[1 * 2000 + 777] = nan;
      w.tensors[0].f32()[2 * 2000 + 5] = std::numeric_limits<float>::infinity();
    };
    CHECK(runner.run(reduce_problem(3, 2000, kind, "last"), WorkloadKind::kPoisonedOutput, 7, plant) == "");
    CHECK(std::isnan(runner.last_output()[1]));
    CHECK(std::isinf(runner.last_output()[2]));
    CHECK(std::isfinite(runner.last_output()[0]));
  }
}
