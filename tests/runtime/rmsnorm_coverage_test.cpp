// rmsnorm_rowwise on PoCL against RmsnormOperator's double reference:
// shapes of 1, small primes, tails around every rows-per-block and row-tile
// size (TX * VW), large and skinny; f32, f16 and bf16; the plain and the
// boundary run (offset, constant, large and tiny rows); a NaN row, and an
// infinity (its row becomes +-0, the infinity itself NaN).
//
// Tiers (KFORGE_TEST_LEVEL): quick checks fewer shapes; core (CI) builds 7
// instances (2-3 s each on PoCL), each reused across shapes; full adds every
// dtype for every configuration and 12 sampled valid configurations.
#include <catch2/catch.hpp>
#include <cmath>

#include "generator/rmsnorm_operator.hpp"
#include "generator/search_space.hpp"
#include "generator/workload_builder.hpp"
#include "tests/runtime/coverage_runner.hpp"
#include "tests/runtime/vector_row_coverage.hpp"
#include "tests/test_level.hpp"

using namespace kforge;
using test::TestLevel;

namespace {

const RmsnormOperator kOp;

Problem problem(std::int64_t rows, std::int64_t cols, Dtype dtype) {
  return Problem{"rmsnorm", {{"rows", rows}, {"cols", cols}}, dtype, {}, {}, {}};
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
  test::CoverageRunner runner("rmsnorm_rowwise", config);
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

TEST_CASE("rmsnorm_rowwise: the kernel file compiles on its own with the prelude", "[opencl][rmsnorm]") {
  CHECK(test::compiles_alone("rmsnorm_rowwise") == "");
}

TEST_CASE("rmsnorm_rowwise: the default serves every shape and the space is real", "[opencl][rmsnorm]") {
  const auto& m = test::builtin_template("rmsnorm_rowwise").manifest;
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

TEST_CASE("rmsnorm_rowwise: shapes, f32", "[opencl][rmsnorm]") {
  // default; one thread per row with 4-wide loads; 256 threads per row with
  // 2-wide loads (512 elements per step).
  for (const char* c : {"RY2_TX64_VW1", "RY32_TX1_VW4", "RY1_TX256_VW2"}) {
    SECTION(c) {
      check(c, shapes(Dtype::kF32));
    }
  }
}

TEST_CASE("rmsnorm_rowwise: shapes, f16 and bf16", "[opencl][rmsnorm]") {
  std::vector<const char*> configs = {"RY4_TX16_VW4"};
  if (test::test_level() == TestLevel::kFull) configs.insert(configs.end(), {"RY2_TX64_VW1", "RY32_TX1_VW4"});
  for (Dtype d : {Dtype::kF16, Dtype::kBF16}) {
    for (const char* c : configs) {
      SECTION(std::string(dtype_name(d)) + " " + c) {
        check(c, shapes(d));
      }
    }
  }
}

TEST_CASE("rmsnorm_rowwise: a NaN row gives a NaN row, an infinity zeroes its row", "[opencl][rmsnorm]") {
  for (Dtype d : {Dtype::kF32, Dtype::kF16}) {
    INFO(dtype_name(d));
    test::CoverageRunner runner("rmsnorm_rowwise", "RY4_TX16_VW4");
    auto plant = [](Workload& w) {
      HostTensor& x = w.tensors[tensor_named(w, "X")];
      store_element(x, 0 * 37 + 5, std::nanf(""));
      store_element(x, 2 * 37 + 36, INFINITY);  // in the scalar tail of the row
      store_element(x, 5 * 37 + 0, -INFINITY);
    };
    CHECK(runner.run(problem(6, 37, d), WorkloadKind::kPoisonedOutput, 7, plant) == "");
    const auto& y = runner.last_output();
    CHECK(std::isnan(y[0 * 37 + 11]));
    for (int r : {2, 5}) CHECK(y[r * 37 + 11] == 0.0f);
    CHECK(std::isnan(y[2 * 37 + 36]));
    for (int r : {1, 3, 4}) CHECK(std::isfinite(y[r * 37 + 11]));
  }
}

TEST_CASE("rmsnorm_rowwise: sampled valid configurations are correct", "[opencl][rmsnorm]") {
  // Every configuration the constraints admit must be correct.
  const std::size_t count = test::test_level() == TestLevel::kFull ? 12 : 2;
  SearchSpace space(test::builtin_template("rmsnorm_rowwise").manifest, kOp, problem(64, 1024, Dtype::kF32),
                    test::coverage_device().info().limits());
  auto all = space.enumerate();
  REQUIRE(all.ok());
  const std::vector<Problem> dims = {problem(7, 1, Dtype::kF32), problem(33, 129, Dtype::kF32),
                                     problem(3, 1031, Dtype::kF16)};
  const std::size_t step = std::max<std::size_t>(1, all->size() / count);
  for (std::size_t i = step / 2; i < all->size(); i += step) {
    const std::string c = (*all)[i].canonical_name();
    SECTION(c) {
      check(c, dims);
    }
  }
}

// rmsnorm_vector_row: the row in registers, so each family runs on the
// fewest chunks per thread that hold the row (tests/runtime/vector_row_coverage.hpp).

TEST_CASE("rmsnorm_vector_row: the kernel file compiles on its own with the prelude", "[opencl][rmsnorm]") {
  CHECK(test::compiles_alone("rmsnorm_vector_row") == "");
}

TEST_CASE("rmsnorm_vector_row: no configuration is proposed that cannot hold the row", "[opencl][rmsnorm]") {
  const auto& m = test::builtin_template("rmsnorm_vector_row").manifest;
  CHECK(m.default_config().canonical_name() == "NV8_RY1_TX128_VW4");
  DeviceLimits gpu;  // 1024 threads and 48 KiB of shared memory per block
  gpu.max_block_threads = 1024;
  gpu.local_mem_bytes = gpu.max_shared_bytes = 49152;
  for (std::int64_t cols : {1, 100, 4096, 4097, 32768}) {
    SearchSpace space(m, kOp, problem(8, cols, Dtype::kF32), gpu);
    auto all = space.enumerate();
    REQUIRE(all.ok());
    INFO("cols " << cols);
    CHECK_FALSE(all->empty());
    for (const Config& c : *all) {
      CHECK(c.values.at("TX") * c.values.at("VW") * c.values.at("NV") >= cols);
    }
  }
  SearchSpace at_4096(m, kOp, problem(8, 4096, Dtype::kF32), DeviceLimits::baseline());
  CHECK(*at_4096.is_valid(m.default_config()));
  SearchSpace at_4097(m, kOp, problem(8, 4097, Dtype::kF32), DeviceLimits::baseline());
  CHECK_FALSE(*at_4097.is_valid(m.default_config()));
  SearchSpace too_long(m, kOp, problem(8, 32769, Dtype::kF32), DeviceLimits::baseline());
  auto blocked = too_long.failed_problem_check();
  REQUIRE(blocked.ok());
  CHECK(*blocked != nullptr);
}

TEST_CASE("rmsnorm_vector_row: shapes and tails, f32, f16 and bf16", "[opencl][rmsnorm]") {
  // 32 threads per row (one warp) with 16-byte f32 loads; 8 threads per row,
  // 4 rows per group, element loads; 16 threads per row with 8-wide loads.
  const std::vector<std::pair<Dtype, const char*>> runs = {{Dtype::kF32, "RY2_TX32_VW4"},
                                                           {Dtype::kF32, "RY4_TX8_VW1"},
                                                           {Dtype::kF16, "RY2_TX16_VW8"},
                                                           {Dtype::kBF16, "RY2_TX16_VW8"}};
  for (const auto& [dtype, family] : runs) {
    SECTION(std::string(dtype_name(dtype)) + " " + family) {
      int covered = 0;
      CHECK(test::check_vector_row("rmsnorm_vector_row", kOp, family, shapes(dtype), covered) == "");
      CHECK(covered > 20);
    }
  }
}
