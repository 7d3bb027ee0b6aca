// rope_pairs on PoCL against RopeOperator's double reference: both pairings;
// head dims of 2 to 256 around every TX; token and head counts around every
// RY * HB group; f32, f16 and bf16; position 0 with theta 10000 and a late
// position (4093, theta 500000), then a decode step at position 100,000;
// NaN stays in its pair; and the tolerance rejects a position off by one and
// the other pairing.
//
// Tiers (KFORGE_TEST_LEVEL): quick checks fewer shapes; core (CI) builds 8
// instances, each reused across shapes; full adds configurations.
#include <catch2/catch.hpp>
#include <cmath>

#include "generator/rope_operator.hpp"
#include "generator/search_space.hpp"
#include "generator/workload_builder.hpp"
#include "tests/runtime/coverage_runner.hpp"
#include "tests/test_level.hpp"

using namespace kforge;
using test::TestLevel;

namespace {

const RopeOperator kOp;

Problem problem(std::int64_t tokens, std::int64_t heads, std::int64_t head_dim, Dtype dtype = Dtype::kF32,
                const char* pairing = "half") {
  return Problem{"rope", {{"tokens", tokens}, {"heads", heads}, {"head_dim", head_dim}},
                 dtype,  {},
                 {},     {{"pairing", pairing}}};
}

/// head_dim 2 .. 256 (pairs around every TX up to 128), heads 1 .. 33 (around
/// RY * HB), a prefill-like and a decode-like shape.
std::vector<Problem> shapes(Dtype dtype, const char* pairing) {
  const bool quick = test::test_level() == TestLevel::kQuick;
  std::vector<std::int64_t> dims = {2, 4, 6, 14, 64, 66, 128};
  if (!quick) dims.insert(dims.end(), {30, 34, 126, 256});
  std::vector<Problem> out;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    out.push_back(problem(3, 5, dims[i], dtype, pairing));
    out.push_back(problem(i % 2 ? 1 : 7, i % 2 ? 33 : 8, dims[i], dtype, pairing));
  }
  out.push_back(problem(129, 8, 128, dtype, pairing));  // prefill
  out.push_back(problem(1, 32, 128, dtype, pairing));   // decode
  return out;
}

void check(const std::string& config, const std::vector<Problem>& problems) {
  test::CoverageRunner runner("rope_pairs", config);
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

void set_pos0(Workload& w, int pos0) {
  for (auto& a : w.args)
    if (a.name == "pos0") a.i32 = pos0;
}

}  // namespace

TEST_CASE("rope_pairs: the kernel file compiles on its own with the prelude", "[opencl][rope]") {
  CHECK(test::compiles_alone("rope_pairs") == "");
}

TEST_CASE("rope_pairs: the default serves every shape and the space is real", "[opencl][rope]") {
  const auto& m = test::builtin_template("rope_pairs").manifest;
  CHECK(m.default_config().canonical_name() == "HB2_RY4_TX32");
  for (std::int64_t head_dim : {2, 256}) {
    SearchSpace space(m, kOp, *kOp.normalize(problem(1, 1, head_dim)), DeviceLimits::baseline());
    auto valid = space.is_valid(m.default_config());
    REQUIRE(valid.ok());
    CHECK(valid.value());
    auto all = space.enumerate();
    REQUIRE(all.ok());
    CHECK(all->size() > 100);
  }
}

TEST_CASE("rope_pairs: shapes, f32, both pairings", "[opencl][rope]") {
  // default; one thread per head with 8 heads sharing each sine; 128 threads
  // along the pairs, one head each.
  for (const char* pairing : {"half", "interleaved"}) {
    for (const char* c : {"HB2_RY4_TX32", "HB8_RY8_TX1", "HB1_RY1_TX128"}) {
      SECTION(std::string(pairing) + " " + c) {
        check(c, shapes(Dtype::kF32, pairing));
      }
    }
  }
}

TEST_CASE("rope_pairs: shapes, f16 and bf16", "[opencl][rope]") {
  for (Dtype d : {Dtype::kF16, Dtype::kBF16}) {
    SECTION(std::string(dtype_name(d))) {
      check("HB4_RY2_TX16", shapes(d, d == Dtype::kF16 ? "half" : "interleaved"));
    }
  }
}

TEST_CASE("rope_pairs: a decode step at position 100000", "[opencl][rope]") {
  test::CoverageRunner runner("rope_pairs", "HB2_RY4_TX32");
  for (const char* pairing : {"half", "interleaved"}) {
    const std::string failure =
        runner.run(problem(1, 8, 128, Dtype::kBF16, pairing), WorkloadKind::kAccumulate, 9,
                   [](Workload& w) { set_pos0(w, 100000); });
    CHECK(failure == "");
  }
}

TEST_CASE("rope_pairs: NaN stays in its pair", "[opencl][rope]") {
  test::CoverageRunner runner("rope_pairs", "HB2_RY4_TX32");
  auto plant = [](Workload& w) {
    store_element(w.tensors[0], 2 * 16 + 3, std::nanf(""));
  };  // token 0, head 2
  CHECK(runner.run(problem(2, 3, 16), WorkloadKind::kAccumulate, 7, plant) == "");
  const auto& y = runner.last_output();
  for (int j = 0; j < 96; ++j) CHECK(std::isnan(y[j]) == (j == 2 * 16 + 3 || j == 2 * 16 + 11));
}

TEST_CASE("rope_pairs: the tolerance rejects a position off by one and the other pairing", "[opencl][rope]") {
  test::CoverageRunner runner("rope_pairs", "HB2_RY4_TX32");
  for (auto kind : {WorkloadKind::kPoisonedOutput, WorkloadKind::kAccumulate}) {
    const Problem p = *kOp.normalize(problem(4, 2, 64));
    REQUIRE(runner.run(p, kind) == "");
    const std::vector<float> out = runner.last_output();
    Workload w = kOp.make_workload(p, 7, kind);
    for (auto& a : w.args)
      if (a.name == "pos0") ++a.i32;
    CHECK_FALSE(validate_output(out.data(), out.size(), kOp.reference(p, w)).passed);
    const Problem other = *kOp.normalize(problem(4, 2, 64, Dtype::kF32, "interleaved"));
    CHECK_FALSE(
        validate_output(out.data(), out.size(), kOp.reference(other, kOp.make_workload(other, 7, kind)))
            .passed);
  }
}

TEST_CASE("rope_pairs: sampled valid configurations are correct", "[opencl][rope]") {
  const std::size_t count = test::test_level() == TestLevel::kFull ? 12 : 2;
  SearchSpace space(test::builtin_template("rope_pairs").manifest, kOp, *kOp.normalize(problem(8, 8, 128)),
                    test::coverage_device().info().limits());
  auto all = space.enumerate();
  REQUIRE(all.ok());
  const std::vector<Problem> dims = {problem(3, 7, 2), problem(5, 9, 130), problem(2, 3, 64, Dtype::kF16)};
  const std::size_t step = std::max<std::size_t>(1, all->size() / count);
  for (std::size_t i = step / 2; i < all->size(); i += step) {
    const std::string c = (*all)[i].canonical_name();
    SECTION(c) {
      check(c, dims);
    }
  }
}
