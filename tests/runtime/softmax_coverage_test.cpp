// softmax_online, softmax_split_row and softmax_vector_row on PoCL: rows of
// 1 to 65,536 columns (past 65,536 for the split template, up to the 32,768
// envelope for the vector-row one), tails around the block, vector and chunk
// sizes, f32/f16/bf16, boundary rows (all negative, large spread, ascending),
// and the contract's special values (NaN, +Inf, -Inf). Every problem runs
// twice, so the split template's counters must be left zero.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "generator/softmax_operator.hpp"
#include "tests/runtime/coverage_runner.hpp"
#include "tests/runtime/vector_row_coverage.hpp"
#include "tests/test_level.hpp"

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

// softmax_vector_row: the row in registers, so each family runs on the
// fewest chunks per thread that hold the row (tests/runtime/vector_row_coverage.hpp).

namespace {

const SoftmaxOperator kSoftmax;

/// cols: 1, small primes, one below, at and above every row tile TX * VW
/// (32 .. 1024), and long rows up to the envelope; rows of 1, 5 and 33.
std::vector<Problem> vector_row_shapes(Dtype dtype) {
  const bool quick = test::test_level() == test::TestLevel::kQuick;
  std::vector<std::int64_t> cols = {1, 2, 3, 7, 13};
  for (std::int64_t tile = 32; tile <= 1024; tile *= 2) {
    if (quick && tile != 64 && tile != 256) continue;
    cols.insert(cols.end(), {tile - 1, tile, tile + 1});
  }
  std::vector<Problem> out;
  for (std::size_t i = 0; i < cols.size(); ++i) {
    out.push_back(softmax_problem(5, cols[i], dtype));
    out.push_back(softmax_problem(i % 2 ? 1 : 33, cols[i], dtype));
  }
  out.push_back(softmax_problem(65, 4099, dtype));
  if (!quick) out.push_back(softmax_problem(2, 32768, dtype));  // the envelope's longest row
  return out;
}

}  // namespace

TEST_CASE("softmax_vector_row: the kernel file compiles on its own with the prelude", "[opencl][softmax]") {
  CHECK(test::compiles_alone("softmax_vector_row") == "");
}

TEST_CASE("softmax_vector_row: shapes and tails, f32, f16 and bf16", "[opencl][softmax]") {
  // One warp per row with 16-byte f32 loads; 8 threads per row and 4 rows
  // per group with element loads; 16 threads per row with 8-wide loads.
  const std::vector<std::pair<Dtype, const char*>> runs = {{Dtype::kF32, "RY2_TX32_VW4"},
                                                           {Dtype::kF32, "RY4_TX8_VW1"},
                                                           {Dtype::kF16, "RY2_TX16_VW8"},
                                                           {Dtype::kBF16, "RY2_TX16_VW8"}};
  for (const auto& [dtype, family] : runs) {
    SECTION(std::string(dtype_name(dtype)) + " " + family) {
      int covered = 0;
      CHECK(test::check_vector_row("softmax_vector_row", kSoftmax, family, vector_row_shapes(dtype), covered) ==
            "");
      CHECK(covered > 20);
    }
  }
}

TEST_CASE("softmax_vector_row: NaN, +Inf and -Inf follow the contract", "[opencl][softmax]") {
  // 100 columns over 32 threads of 4-wide chunks: column 99 is in a partial chunk.
  test::CoverageRunner runner("softmax_vector_row", "NV1_RY2_TX32_VW4");
  const float inf = std::numeric_limits<float>::infinity();
  // Row 0: a NaN; row 1: a +Inf in the last chunk; row 2: -Inf only; row 3:
  // some -Inf (they give 0); row 4: every element but one -Inf.
  auto plant = [&](Workload& w) {
    float* x = w.tensors[0].f32();
    x[0 * 100 + 50] = std::numeric_limits<float>::quiet_NaN();
    x[1 * 100 + 99] = inf;
    for (int j = 0; j < 100; ++j) x[2 * 100 + j] = -inf;
    for (int j = 0; j < 100; j += 3) x[3 * 100 + j] = -inf;
    for (int j = 0; j < 100; ++j) x[4 * 100 + j] = j == 61 ? 0.5f : -inf;
  };
  REQUIRE(runner.run(softmax_problem(6, 100), WorkloadKind::kPoisonedOutput, 7, plant) == "");
  const auto& y = runner.last_output();
  for (int r = 0; r < 3; ++r) {
    CHECK(std::isnan(y[r * 100 + 7]));
    CHECK(std::isnan(y[r * 100 + 99]));
  }
  CHECK(y[3 * 100 + 0] == 0.0f);
  CHECK(y[4 * 100 + 61] == 1.0f);
  CHECK(y[4 * 100 + 60] == 0.0f);
  CHECK(std::isfinite(y[5 * 100 + 0]));
}
