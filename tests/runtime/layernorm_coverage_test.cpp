// layernorm_rowwise and layernorm_vector_row on PoCL against
// LayernormOperator's double reference:
// shapes of 1, small primes, tails around every rows-per-block and row-tile
// size (TX * VW), large and skinny; f32, f16 and bf16; the plain and the
// boundary run (offset, constant, large and tiny rows); NaN and Inf rows.
//
// Tiers (KFORGE_TEST_LEVEL): quick checks fewer shapes; core (CI) builds 7
// instances (2-3 s each on PoCL), each reused across shapes; full adds every
// dtype for every configuration and 12 sampled valid configurations.
#include <catch2/catch.hpp>

#include <cmath>

#include "generator/layernorm_operator.hpp"
#include "generator/search_space.hpp"
#include "generator/workload_builder.hpp"
#include "tests/runtime/coverage_runner.hpp"
#include "tests/runtime/vector_row_coverage.hpp"
#include "tests/test_level.hpp"

using namespace kforge;
using test::TestLevel;

namespace {

const LayernormOperator kOp;

Problem problem(std::int64_t rows, std::int64_t cols, Dtype dtype) {
  return Problem{"layernorm", {{"rows", rows}, {"cols", cols}}, dtype, {}, {}, {}};
}

/// cols: 1, small primes, and one below, at and above every row tile TX * VW
/// (32 .. 1024), each with 5 rows and with 1 or 33 rows (past every RY);
/// large, long-row and skinny (decode-like) shapes.
std::vector<Problem> shapes(Dtype dtype) {
  const bool quick = test::test_level() == TestLevel::kQuick;
  std::vector<std::int64_t> cols = {1, 2, 3, 5, 7, 13};
  for (std::int64_t tile = 32; tile <= 1024; tile *= 2) {
    if (quick && tile != 64 && tile != 256) continue;
    cols.insert(cols.end(), {tile - 1, tile, tile + 1});
  }
  std::vector<Problem> out;
  for (std::size_t i = 0; i < cols.size(); ++i) {
    out.push_back(problem(5, cols[i], dtype));
    out.push_back(problem(i % 2 ? 1 : 33, cols[i], dtype));
  }
  out.push_back(problem(257, 4099, dtype));                                  // large
  if (!quick) out.push_back(problem(3, 65537, dtype));                       // long rows
  for (std::int64_t r : {1, 4, 16}) out.push_back(problem(r, 4096, dtype));  // few rows
  for (std::int64_t c : {1, 8, 16}) out.push_back(problem(1031, c, dtype));  // many short rows
  return out;
}

void check(const std::string& config, const std::vector<Problem>& problems) {
  test::CoverageRunner runner("layernorm_rowwise", config);
  for (const Problem& p : problems) {
    for (auto run : {WorkloadKind::kPoisonedOutput, WorkloadKind::kAccumulate}) {
      const std::string failure = runner.run(p, run);
      if (!failure.empty()) {
        FAIL_CHECK(failure);
        return;
      }
    }
  }
  SUCCEED();
}

}  // namespace

TEST_CASE("layernorm_rowwise: the kernel file compiles on its own with the prelude", "[opencl][layernorm]") {
  CHECK(test::compiles_alone("layernorm_rowwise") == "");
}

TEST_CASE("layernorm_rowwise: the default serves every shape and the space is real", "[opencl][layernorm]") {
  const auto& m = test::builtin_template("layernorm_rowwise").manifest;
  CHECK(m.default_config().canonical_name() == "RY2_TX64_VW1");
  for (std::int64_t cols : {1, 4096}) {
    SearchSpace space(m, kOp, problem(1, cols, Dtype::kF32), DeviceLimits::baseline());
    auto valid = space.is_valid(m.default_config());
    REQUIRE(valid.ok());
    CHECK(valid.value());
    auto all = space.enumerate();
    REQUIRE(all.ok());
    CHECK(all->size() > 60);
  }
}

TEST_CASE("layernorm_rowwise: shapes, f32", "[opencl][layernorm]") {
  // default; one thread per row with 4-wide loads; 256 threads per row with
  // 2-wide loads (512 elements per step).
  for (const char* c : {"RY2_TX64_VW1", "RY32_TX1_VW4", "RY1_TX256_VW2"}) {
    SECTION(c) { check(c, shapes(Dtype::kF32)); }
  }
}

TEST_CASE("layernorm_rowwise: shapes, f16 and bf16", "[opencl][layernorm]") {
  std::vector<const char*> configs = {"RY4_TX16_VW4"};
  if (test::test_level() == TestLevel::kFull) configs.insert(configs.end(), {"RY2_TX64_VW1", "RY32_TX1_VW4"});
  for (Dtype d : {Dtype::kF16, Dtype::kBF16}) {
    for (const char* c : configs) {
      SECTION(std::string(dtype_name(d)) + " " + c) { check(c, shapes(d)); }
    }
  }
}

TEST_CASE("layernorm_rowwise: a row with NaN or Inf gives a NaN row, the others stay right", "[opencl][layernorm]") {
  for (Dtype d : {Dtype::kF32, Dtype::kF16}) {
    INFO(dtype_name(d));
    test::CoverageRunner runner("layernorm_rowwise", "RY4_TX16_VW4");
    auto plant = [](Workload& w) {
      HostTensor& x = w.tensors[tensor_named(w, "X")];
      store_element(x, 0 * 37 + 5, std::nanf(""));
      store_element(x, 2 * 37 + 36, INFINITY);  // in the scalar tail of the row
      store_element(x, 5 * 37 + 0, -INFINITY);
    };
    CHECK(runner.run(problem(6, 37, d), WorkloadKind::kPoisonedOutput, 7, plant) == "");
    const auto& y = runner.last_output();
    for (int r : {0, 2, 5}) CHECK(std::isnan(y[r * 37 + 11]));
    for (int r : {1, 3, 4}) CHECK(std::isfinite(y[r * 37 + 11]));
  }
}

TEST_CASE("layernorm_rowwise: sampled valid configurations are correct", "[opencl][layernorm]") {
  // Every configuration the constraints admit must be correct.
  const std::size_t count = test::test_level() == TestLevel::kFull ? 12 : 2;
  SearchSpace space(test::builtin_template("layernorm_rowwise").manifest, kOp, problem(64, 1024, Dtype::kF32),
                    test::coverage_device().info().limits());
  auto all = space.enumerate();
  REQUIRE(all.ok());
  const std::vector<Problem> dims = {problem(7, 1, Dtype::kF32), problem(33, 129, Dtype::kF32),
                                     problem(3, 1031, Dtype::kF16)};
  const std::size_t step = std::max<std::size_t>(1, all->size() / count);
  for (std::size_t i = step / 2; i < all->size(); i += step) {
    const std::string c = (*all)[i].canonical_name();
    SECTION(c) { check(c, dims); }
  }
}

// layernorm_vector_row: the row in registers, so each family runs on the
// fewest chunks per thread that hold the row (tests/runtime/vector_row_coverage.hpp).

TEST_CASE("layernorm_vector_row: the kernel file compiles on its own with the prelude", "[opencl][layernorm]") {
  CHECK(test::compiles_alone("layernorm_vector_row") == "");
}

TEST_CASE("layernorm_vector_row: shapes and tails, f32, f16 and bf16", "[opencl][layernorm]") {
  // One warp per row with 16-byte f32 loads; 8 threads per row and 4 rows
  // per group with element loads; 16 threads per row with 8-wide loads.
  const std::vector<std::pair<Dtype, const char*>> runs = {{Dtype::kF32, "RY2_TX32_VW4"},
                                                           {Dtype::kF32, "RY4_TX8_VW1"},
                                                           {Dtype::kF16, "RY2_TX16_VW8"},
                                                           {Dtype::kBF16, "RY2_TX16_VW8"}};
  for (const auto& [dtype, family] : runs) {
    SECTION(std::string(dtype_name(dtype)) + " " + family) {
      int covered = 0;
      CHECK(test::check_vector_row("layernorm_vector_row", kOp, family, shapes(dtype), covered) == "");
      CHECK(covered > 20);
    }
  }
}

TEST_CASE("layernorm_vector_row: a row with NaN or Inf gives a NaN row, the others stay right",
          "[opencl][layernorm]") {
  // 37 columns over 16 threads of 4-wide chunks: column 36 is in a partial chunk.
  for (Dtype d : {Dtype::kF32, Dtype::kF16}) {
    INFO(dtype_name(d));
    test::CoverageRunner runner("layernorm_vector_row", "NV1_RY4_TX16_VW4");
    auto plant = [](Workload& w) {
      HostTensor& x = w.tensors[tensor_named(w, "X")];
      store_element(x, 0 * 37 + 5, std::nanf(""));
      store_element(x, 2 * 37 + 36, INFINITY);
      store_element(x, 5 * 37 + 0, -INFINITY);
    };
    CHECK(runner.run(problem(6, 37, d), WorkloadKind::kPoisonedOutput, 7, plant) == "");
    const auto& y = runner.last_output();
    for (int r : {0, 2, 5}) CHECK(std::isnan(y[r * 37 + 11]));
    for (int r : {1, 3, 4}) CHECK(std::isfinite(y[r * 37 + 11]));
  }
}
