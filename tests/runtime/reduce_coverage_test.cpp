// reduce_tiled and reduce_vector_row on PoCL: sum and max, last axis and
// whole tensor (reduce_tiled; reduce_vector_row refuses axis=all), one pass
// and split (last-block-done), f32/f16/bf16, shapes 1, primes, tails around
// the block and vector sizes, long rows; boundary rows; NaN propagation for max.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "generator/search_space.hpp"
#include "tests/runtime/coverage_runner.hpp"
#include "tests/test_level.hpp"

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

// reduce_vector_row: TX threads per row, RY rows per group.

namespace {

/// Runs every shape `config` is valid for, plain and accumulating; the
/// first failure, or "". `covered` counts the shapes run.
std::string check_rows(const char* config, Dtype dtype, const char* kind, int& covered) {
  const TemplateSource& tpl = test::builtin_template("reduce_vector_row");
  const Operator& op = *find_operator("reduce");
  std::vector<std::array<std::int64_t, 2>> all = shapes();
  all.insert(all.end(), {{33, 1}, {5, 2}, {1031, 16}, {64, 4096}});
  test::CoverageRunner runner("reduce_vector_row", config);
  for (const auto& [rows, cols] : all) {
    const Problem p = reduce_problem(rows, cols, kind, "last", dtype);
    SearchSpace space(tpl.manifest, op, p, test::coverage_device().info().limits());
    auto valid = space.is_valid(*Config::parse(config));
    REQUIRE(valid.ok());
    if (!*valid) continue;
    for (auto run : {WorkloadKind::kPoisonedOutput, WorkloadKind::kAccumulate}) {
      const std::string failure = runner.run(p, run);
      if (!failure.empty()) return failure;
    }
    ++covered;
  }
  return "";
}

}  // namespace

TEST_CASE("reduce_vector_row: the kernel file compiles on its own with the prelude", "[opencl][reduce]") {
  CHECK(test::compiles_alone("reduce_vector_row") == "");
}

TEST_CASE("reduce_vector_row: sum and max over rows, f32, f16 and bf16", "[opencl][reduce]") {
  // Four threads per row with 16-byte f32 loads (valid for any row); a warp
  // per row with element loads; 64 threads per row with 8-wide loads.
  const std::vector<std::tuple<Dtype, const char*, int>> runs = {{Dtype::kF32, "RY8_TX4_VW4", 10},
                                                                 {Dtype::kF32, "RY2_TX32_VW1", 6},
                                                                 {Dtype::kF16, "RY1_TX64_VW8", 3},
                                                                 {Dtype::kBF16, "RY4_TX8_VW2", 6}};
  for (const auto& [dtype, config, at_least] : runs) {
    for (const char* kind : {"sum", "max"}) {
      SECTION(std::string(dtype_name(dtype)) + " " + config + " " + kind) {
        int covered = 0;
        CHECK(check_rows(config, dtype, kind, covered) == "");
        CHECK(covered >= at_least);
      }
    }
  }
}

TEST_CASE("reduce_vector_row: axis=all is outside its envelope", "[opencl][reduce]") {
  test::CoverageRunner runner("reduce_vector_row", "RY8_TX4_VW4");
  const std::string r = runner.run(reduce_problem(4, 64, "sum", "all"), WorkloadKind::kPoisonedOutput);
  INFO(r);
  CHECK(r.find("is outside envelope") != std::string::npos);
  CHECK(r.find("'axis == 0'") != std::string::npos);
}

TEST_CASE("reduce_vector_row: max propagates NaN, sum follows IEEE", "[opencl][reduce]") {
  // 2000 columns over 32 threads of 4-wide loads; the NaN lands mid-row.
  test::CoverageRunner runner("reduce_vector_row", "RY2_TX32_VW4");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* kind : {"max", "sum"}) {
    INFO(kind);
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
