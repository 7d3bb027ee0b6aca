// transpose_tiled on PoCL: 2-D and batched, f32/f16/bf16, shapes 1, primes,
// tails around every tile size, skinny; exact comparison; NaN and infinities copied.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "tests/runtime/coverage_runner.hpp"
#include "tests/test_level.hpp"

using namespace kforge;

namespace {

Problem transpose_problem(std::int64_t rows, std::int64_t cols, std::int64_t batch, Dtype dtype = Dtype::kF32) {
  return Problem{"transpose", {{"rows", rows}, {"cols", cols}, {"batch", batch}}, dtype, {}, {}, {}};
}

void check(const char* config, Dtype dtype) {
  std::vector<std::array<std::int64_t, 3>> shapes = {{1, 1, 1},   {7, 13, 1}, {31, 33, 2}, {65, 63, 1},
                                                     {1, 129, 3}, {129, 1, 1}, {16, 200, 1}};
  if (test::test_level() >= test::TestLevel::kFull) shapes.push_back({1025, 777, 2});
  test::CoverageRunner runner("transpose_tiled", config);
  for (const auto& [rows, cols, batch] : shapes) {
    for (auto run : {WorkloadKind::kPoisonedOutput, WorkloadKind::kAccumulate}) {
      const std::string failure = runner.run(transpose_problem(rows, cols, batch, dtype), run);
      if (!failure.empty()) {
        FAIL_CHECK(failure);
        return;
      }
    }
  }
  SUCCEED();
}

}  // namespace

TEST_CASE("transpose_tiled: every tile shape, 2-D and batched", "[opencl][transpose]") {
  for (const char* config : {"BY8_PAD1_TILE16", "BY4_PAD0_TILE32", "BY8_PAD2_TILE8"}) {
    SECTION(config) { check(config, Dtype::kF32); }
  }
  for (Dtype dtype : {Dtype::kF16, Dtype::kBF16}) {
    SECTION(std::string("f16/bf16 ") + std::string(dtype_name(dtype))) { check("BY8_PAD1_TILE16", dtype); }
  }
}

TEST_CASE("transpose_tiled: NaN and infinities are copied", "[opencl][transpose]") {
  test::CoverageRunner runner("transpose_tiled", "BY8_PAD1_TILE16");
  auto plant = [](Workload& w) {
    w.tensors[0].f32()[3] = std::numeric_limits<float>::quiet_NaN();
    w.tensors[0].f32()[4] = -std::numeric_limits<float>::infinity();
  };
  CHECK(runner.run(transpose_problem(5, 7, 1), WorkloadKind::kPoisonedOutput, 7, plant) == "");
  CHECK(std::isnan(runner.last_output()[3 * 5 + 0]));
  CHECK(std::isinf(runner.last_output()[4 * 5 + 0]));
}
