// softmax_online and softmax_split_row on PoCL: rows of 1 to 65,536 columns
// (and past 65,536 for the split template), tails around the block, vector
// and chunk sizes, f32/f16/bf16, boundary rows (all negative, large spread,
// ascending), and the contract's special values (NaN, +Inf, -Inf). Every
// problem runs twice, so the split template's counters must be left zero.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "coverage_runner.hpp"
#include "test_level.hpp"

using namespace kforge;

namespace {

Problem softmax_problem(std::int64_t rows, std::int64_t cols, Dtype dtype = Dtype::kF32) {
  return Problem{"softmax", {{"rows", rows}, {"cols", cols}}, dtype, {}, {}, {}};
}

void check(const char* tpl, const char* config, Dtype dtype,
           const std::vector<std::array<std::int64_t, 2>>& extra = {}) {
  std::vector<std::array<std::int64_t, 2>> shapes = {{1, 1},  {3, 7},   {5, 63},  {4, 64},
                                                     {7, 65}, {2, 257}, {1, 1031}, {16, 3}};
  if (test::test_level() >= test::TestLevel::kCore) shapes.push_back({2, 65536});
  if (test::test_level() >= test::TestLevel::kFull) shapes.push_back({1024, 127});
  shapes.insert(shapes.end(), extra.begin(), extra.end());
  test::CoverageRunner runner(tpl, config);
  for (const auto& [rows, cols] : shapes) {
    for (auto run : {WorkloadKind::kPoisonedOutput, WorkloadKind::kAccumulate}) {
      const std::string failure = runner.run(softmax_problem(rows, cols, dtype), run);
      if (!failure.empty()) {
        FAIL_CHECK(failure);
        return;
      }
    }
  }
  SUCCEED();
}

}  // namespace

TEST_CASE("softmax_online: shapes and dtypes", "[opencl][softmax]") {
  for (const char* config : {"BLOCK64_VW1", "BLOCK32_VW4", "BLOCK256_VW2"}) {
    SECTION(config) { check("softmax_online", config, Dtype::kF32); }
  }
  for (Dtype dtype : {Dtype::kF16, Dtype::kBF16}) {
    SECTION(std::string("dtype ") + std::string(dtype_name(dtype))) {
      check("softmax_online", "BLOCK32_VW4", dtype);
    }
  }
}

TEST_CASE("softmax_split_row: shapes, dtypes and chunkings", "[opencl][softmax]") {
  // Chunks of whole VW vectors: short and empty last chunks (cols < SPLIT,
  // cols not a multiple of SPLIT * VW), and rows past 65,536 columns.
  const std::vector<std::array<std::int64_t, 2>> longer = {{3, 65536 + 37}};
  for (const char* config : {"BLOCK64_SPLIT8_VW1", "BLOCK32_SPLIT64_VW4", "BLOCK256_SPLIT2_VW2"}) {
    SECTION(config) { check("softmax_split_row", config, Dtype::kF32, longer); }
  }
  for (Dtype dtype : {Dtype::kF16, Dtype::kBF16}) {
    SECTION(std::string("dtype ") + std::string(dtype_name(dtype))) {
      check("softmax_split_row", "BLOCK128_SPLIT16_VW4", dtype, longer);
    }
  }
  if (test::test_level() >= test::TestLevel::kFull) {
    SECTION("full: rows of 2^20 columns") {
      check("softmax_split_row", "BLOCK256_SPLIT64_VW4", Dtype::kF32, {{2, 1 << 20}});
    }
  }
}

TEST_CASE("softmax_online: NaN, +Inf and -Inf follow the contract", "[opencl][softmax]") {
  test::CoverageRunner runner("softmax_online", "BLOCK32_VW4");
  const float inf = std::numeric_limits<float>::infinity();
  // Row 0: a NaN; row 1: a +Inf; row 2: -Inf only; row 3: some -Inf (they give 0).
  auto plant = [&](Workload& w) {
    float* x = w.tensors[0].f32();
    x[0 * 100 + 50] = std::numeric_limits<float>::quiet_NaN();
    x[1 * 100 + 3] = inf;
    for (int j = 0; j < 100; ++j) x[2 * 100 + j] = -inf;
    for (int j = 0; j < 100; j += 3) x[3 * 100 + j] = -inf;
  };
  REQUIRE(runner.run(softmax_problem(5, 100), WorkloadKind::kPoisonedOutput, 7, plant) == "");
  const auto& y = runner.last_output();
  for (int r = 0; r < 3; ++r) CHECK(std::isnan(y[r * 100 + 7]));
  CHECK(y[3 * 100 + 0] == 0.0f);
  CHECK(std::isfinite(y[4 * 100 + 0]));
}

TEST_CASE("softmax_split_row: NaN, +Inf and -Inf follow the contract across chunks", "[opencl][softmax]") {
  // 100 columns in SPLIT 4 chunks of 28 (VW 4): 0-27, 28-55, 56-83, 84-99.
  test::CoverageRunner runner("softmax_split_row", "BLOCK32_SPLIT4_VW4");
  const float inf = std::numeric_limits<float>::infinity();
  // Row 0: a NaN in chunk 1; row 1: a +Inf in chunk 3; row 2: -Inf only;
  // row 3: some -Inf (they give 0); row 4: chunk 0 all -Inf (its factor is 0).
  auto plant = [&](Workload& w) {
    float* x = w.tensors[0].f32();
    x[0 * 100 + 50] = std::numeric_limits<float>::quiet_NaN();
    x[1 * 100 + 90] = inf;
    for (int j = 0; j < 100; ++j) x[2 * 100 + j] = -inf;
    for (int j = 0; j < 100; j += 3) x[3 * 100 + j] = -inf;
    for (int j = 0; j < 28; ++j) x[4 * 100 + j] = -inf;
  };
  REQUIRE(runner.run(softmax_problem(6, 100), WorkloadKind::kPoisonedOutput, 7, plant) == "");
  const auto& y = runner.last_output();
  for (int r = 0; r < 3; ++r) {
    CHECK(std::isnan(y[r * 100 + 7]));
    CHECK(std::isnan(y[r * 100 + 99]));
  }
  CHECK(y[3 * 100 + 0] == 0.0f);
  CHECK(y[4 * 100 + 27] == 0.0f);
  CHECK(std::isfinite(y[4 * 100 + 28]));
  CHECK(std::isfinite(y[5 * 100 + 0]));
}
