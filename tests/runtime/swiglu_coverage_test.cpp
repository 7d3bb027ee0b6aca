// swiglu_elementwise on PoCL against SwigluOperator's double reference:
// rows of 1 to 14,337 columns around every vector and chunk size, many and
// few rows; f32, f16 and bf16; plain and saturating gates (both tails of
// silu, e^-a past f32's range); NaN stays in its element; and the tolerance
// rejects the halves swapped.
#include <catch2/catch.hpp>
#include <cmath>

#include "generator/search_space.hpp"
#include "generator/swiglu_operator.hpp"
#include "generator/workload_builder.hpp"
#include "tests/runtime/coverage_runner.hpp"
#include "tests/test_level.hpp"

using namespace kforge;
using test::TestLevel;

namespace {

const SwigluOperator kOp;

Problem problem(std::int64_t rows, std::int64_t cols, Dtype dtype = Dtype::kF32) {
  return Problem{"swiglu", {{"rows", rows}, {"cols", cols}}, dtype, {}, {}, {}};
}

std::vector<Problem> shapes(Dtype dtype) {
  std::vector<Problem> out;
  for (std::int64_t cols : {1, 2, 3, 5, 63, 64, 65, 255, 257, 1023, 4097}) {
    out.push_back(problem(3, cols, dtype));
    out.push_back(problem(cols % 2 ? 1 : 9, cols, dtype));
  }
  out.push_back(problem(1, 14337, dtype));  // a decode step of a Llama-8B-like MLP (14336), plus a tail
  if (test::test_level() != TestLevel::kQuick) out.push_back(problem(129, 1031, dtype));
  return out;
}

void check(const std::string& config, const std::vector<Problem>& problems) {
  test::CoverageRunner runner("swiglu_elementwise", config);
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

TEST_CASE("swiglu_elementwise: the kernel file compiles on its own with the prelude", "[opencl][swiglu]") {
  CHECK(test::compiles_alone("swiglu_elementwise") == "");
}

TEST_CASE("swiglu_elementwise: the default serves every shape and the space is real", "[opencl][swiglu]") {
  const auto& m = test::builtin_template("swiglu_elementwise").manifest;
  CHECK(m.default_config().canonical_name() == "CHUNKS16_RY1_TX64_VW4");
  for (std::int64_t cols : {1, 14336}) {
    SearchSpace space(m, kOp, problem(1, cols), DeviceLimits::baseline());
    auto valid = space.is_valid(m.default_config());
    REQUIRE(valid.ok());
    CHECK(valid.value());
    auto all = space.enumerate();
    REQUIRE(all.ok());
    CHECK(all->size() > 150);
  }
}

TEST_CASE("swiglu_elementwise: shapes, f32", "[opencl][swiglu]") {
  // default; one chunk per row, 8 rows, scalar loads; up to 64 chunks of 256 threads, 2-wide loads.
  for (const char* c : {"CHUNKS16_RY1_TX64_VW4", "CHUNKS1_RY8_TX16_VW1", "CHUNKS64_RY1_TX256_VW2"}) {
    SECTION(c) {
      check(c, shapes(Dtype::kF32));
    }
  }
}

TEST_CASE("swiglu_elementwise: shapes, f16 and bf16", "[opencl][swiglu]") {
  for (Dtype d : {Dtype::kF16, Dtype::kBF16}) {
    SECTION(std::string(dtype_name(d))) {
      check("CHUNKS4_RY2_TX32_VW4", shapes(d));
    }
  }
}

TEST_CASE("swiglu_elementwise: NaN stays in its element", "[opencl][swiglu]") {
  test::CoverageRunner runner("swiglu_elementwise", "CHUNKS4_RY2_TX32_VW4");
  auto plant = [](Workload& w) {
    store_element(w.tensors[0], 0 * 74 + 5, std::nanf(""));        // gate of (0, 5)
    store_element(w.tensors[0], 2 * 74 + 37 + 36, std::nanf(""));  // up of (2, 36), in the tail
  };
  CHECK(runner.run(problem(3, 37, Dtype::kF16), WorkloadKind::kPoisonedOutput, 7, plant) == "");
  const auto& y = runner.last_output();
  for (int i = 0; i < 3 * 37; ++i) CHECK(std::isnan(y[i]) == (i == 5 || i == 2 * 37 + 36));
}

TEST_CASE("swiglu_elementwise: the tolerance rejects the halves swapped", "[opencl][swiglu]") {
  test::CoverageRunner runner("swiglu_elementwise", "CHUNKS16_RY1_TX64_VW4");
  for (auto kind : {WorkloadKind::kPoisonedOutput, WorkloadKind::kAccumulate}) {
    const Problem p = *kOp.normalize(problem(4, 300));
    REQUIRE(runner.run(p, kind) == "");
    const std::vector<float> out = runner.last_output();
    Workload w = kOp.make_workload(p, 7, kind);
    HostTensor& x = w.tensors[0];
    for (std::size_t i = 0; i < 4; ++i) {
      for (std::size_t j = 0; j < 300; ++j) {
        const float g = load_element(x, i * 600 + j);
        store_element(x, i * 600 + j, load_element(x, i * 600 + 300 + j));
        store_element(x, i * 600 + 300 + j, g);
      }
    }
    CHECK_FALSE(validate_output(out.data(), out.size(), kOp.reference(p, w)).passed);
  }
}

TEST_CASE("swiglu_elementwise: sampled valid configurations are correct", "[opencl][swiglu]") {
  const std::size_t count = test::test_level() == TestLevel::kFull ? 12 : 2;
  SearchSpace space(test::builtin_template("swiglu_elementwise").manifest, kOp, problem(64, 1024),
                    test::coverage_device().info().limits());
  auto all = space.enumerate();
  REQUIRE(all.ok());
  const std::vector<Problem> dims = {problem(7, 1), problem(33, 129), problem(3, 1031, Dtype::kBF16)};
  const std::size_t step = std::max<std::size_t>(1, all->size() / count);
  for (std::size_t i = step / 2; i < all->size(); i += step) {
    const std::string c = (*all)[i].canonical_name();
    SECTION(c) {
      check(c, dims);
    }
  }
}
