// gemm_simt_tiled's full contract on PoCL against GemmOperator's double
// reference: f32/f16/bf16 inputs, the four layouts, batched (strided) problems,
// alpha and beta (every problem runs twice: alpha 1.5, beta 0 with C poisoned
// with NaN, then alpha 0.75, beta -0.5 with C random), the fused epilogue
// (bias, and activation none/relu/gelu/silu), tails around each
// configuration's BM, BN and BK, and skinny decode-like shapes (M = 1 .. 16).
// A template broken on purpose must fail with a report naming the
// configuration.
//
// Tiers (KFORGE_TEST_LEVEL): each (configuration, dtype, layout, epilogue) is
// one PoCL build of about 3-4 s, reused across shapes. core (CI) builds 9
// (about 60 s with an empty PoCL cache on a busy 2-core machine); full
// crosses every epilogue with every layout and dtype on two configurations
// and adds larger shapes (196 builds, about 18 minutes there); quick checks
// fewer shapes.
#include <catch2/catch.hpp>

#include <string>

#include "tests/runtime/coverage_runner.hpp"
#include "tests/test_level.hpp"

using namespace kforge;
using test::TestLevel;

namespace {

Problem gemm_problem(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, Dtype dtype,
                     const std::string& layout, const std::string& epilogue) {
  Problem p{"gemm", {{"M", m}, {"N", n}, {"K", k}, {"batch", batch}}, dtype, *parse_layout(layout), {}, {}};
  p.epilogue = *parse_epilogue(epilogue);
  return p;
}

std::int64_t param(const std::string& config, const char* name) { return Config::parse(config)->values.at(name); }

/// M, N, K triples around one configuration's tiles: 1, one below, at and
/// one above BM, BN and BK (mixed so that every edge meets a partial tile in
/// the other dimensions), small primes, and a multi-tile shape.
std::vector<std::array<std::int64_t, 3>> tail_shapes(const std::string& config) {
  const std::int64_t bm = param(config, "BM"), bn = param(config, "BN"), bk = param(config, "BK");
  std::vector<std::array<std::int64_t, 3>> out = {
      {1, 1, 1}, {bm + 1, bn - 1, bk + 1}, {bm - 1, bn + 1, 2 * bk + 1}, {bm, bn, bk}, {7, 13, 31}};
  if (bk > 1) out.push_back({2 * bm + 1, bn, bk - 1});
  if (test::test_level() >= TestLevel::kFull) {
    out.push_back({3 * bm + 5, 2 * bn + 3, 8 * bk + 3});
    out.push_back({129, 257, 33});
  }
  return out;
}

/// Decode-like: M of 1 to 16 against wide N and long K.
std::vector<std::array<std::int64_t, 3>> skinny_shapes() {
  std::vector<std::array<std::int64_t, 3>> out = {{1, 257, 129}, {2, 64, 513}, {3, 33, 64},
                                                  {8, 129, 65},  {15, 31, 7},  {16, 96, 200}};
  if (test::test_level() >= TestLevel::kFull) {
    for (std::int64_t m : {4, 5, 7, 9, 12, 13}) out.push_back({m, 1000, 300});
  }
  return out;
}

/// Runs every shape twice (poisoned C with beta = 0, then beta != 0) with the
/// given batch; fails once, with the runner's report, on the first mismatch.
void check(const std::string& config, Dtype dtype, const std::string& layout, const std::string& epilogue,
           const std::vector<std::array<std::int64_t, 3>>& shapes, std::int64_t batch = 2) {
  test::CoverageRunner runner("gemm_simt_tiled", config);
  const bool quick = test::test_level() == TestLevel::kQuick;
  std::size_t done = 0;
  for (const auto& [m, n, k] : shapes) {
    if (quick && ++done > 3) break;
    for (auto run : {WorkloadKind::kPoisonedOutput, WorkloadKind::kAccumulate}) {
      const std::string failure = runner.run(gemm_problem(m, n, k, batch, dtype, layout, epilogue), run);
      if (!failure.empty()) {
        FAIL_CHECK(failure);
        return;
      }
    }
  }
  SUCCEED();
}

struct Case {
  const char* config;
  Dtype dtype;
  const char* layout;
  const char* epilogue;
};

/// The gemm_simt_tiled template with its kernel text edited: `from` (which
/// must occur exactly once) replaced by `to`.
TemplateSource broken_template(const std::string& from, const std::string& to) {
  const TemplateSource& good = test::builtin_template("gemm_simt_tiled");
  std::string kernel = good.kernel_text;
  const auto at = kernel.find(from);
  REQUIRE(at != std::string::npos);
  REQUIRE(kernel.find(from, at + 1) == std::string::npos);
  kernel.replace(at, from.size(), to);
  auto tpl = TemplateSource::from_text(good.manifest_text, kernel, "broken:gemm_simt_tiled");
  REQUIRE(tpl.ok());
  return std::move(tpl).value();
}

}  // namespace

TEST_CASE("gemm_simt_tiled: dtypes, layouts, alpha/beta and every epilogue on tile tails", "[opencl][gemm][epilogue]") {
  // Configurations: a non-square 64 x 32 tile with VW 2 and padding, the
  // default 32 x 32, and a 64 x 64 tile with VW 4 (vector loads and, in the
  // tails, the scalar ones).
  const std::vector<Case> core = {
      {"BK16_BM64_BN32_PAD1_TM4_TN2_VW2", Dtype::kF32, "NT", "bias"},
      {"BK16_BM64_BN32_PAD1_TM4_TN2_VW2", Dtype::kF32, "NN", "relu"},
      {"BK16_BM64_BN32_PAD1_TM4_TN2_VW2", Dtype::kF32, "TT", "bias+gelu"},
      {"BK8_BM32_BN32_PAD0_TM2_TN2_VW1", Dtype::kF16, "TN", "bias+silu"},
      {"BK16_BM64_BN64_PAD1_TM4_TN4_VW4", Dtype::kBF16, "NT", "bias+relu"},
      {"BK16_BM64_BN64_PAD1_TM4_TN4_VW4", Dtype::kF16, "TT", "none"},
  };
  for (const Case& c : core) {
    const std::string name = std::string(c.config) + " " + std::string(dtype_name(c.dtype)) + " " + c.layout + " " +
                             c.epilogue;
    SECTION(name) { check(c.config, c.dtype, c.layout, c.epilogue, tail_shapes(c.config)); }
  }
  if (test::test_level() >= TestLevel::kFull) {
    for (const char* config : {"BK8_BM32_BN32_PAD0_TM2_TN2_VW1", "BK16_BM64_BN64_PAD1_TM4_TN4_VW4"}) {
      for (Dtype dtype : {Dtype::kF32, Dtype::kF16, Dtype::kBF16}) {
        for (const char* layout : {"NN", "NT", "TN", "TT"}) {
          for (const char* epilogue : {"none", "bias", "relu", "gelu", "silu", "bias+relu", "bias+gelu", "bias+silu"}) {
            const std::string name = std::string("full ") + config + " " + std::string(dtype_name(dtype)) + " " +
                                     layout + " " + epilogue;
            SECTION(name) { check(config, dtype, layout, epilogue, tail_shapes(config)); }
          }
        }
      }
    }
  }
}

TEST_CASE("gemm_simt_tiled: skinny decode-like shapes and batches", "[opencl][gemm][epilogue]") {
  // A 16-row tile made for decode shapes, and the default; batch 1, 3 and 5.
  SECTION("BK8_BM16_BN32_PAD0_TM2_TN4_VW2 f16 NN bias+silu, batch 3") {
    check("BK8_BM16_BN32_PAD0_TM2_TN4_VW2", Dtype::kF16, "NN", "bias+silu", skinny_shapes(), 3);
  }
  SECTION("BK8_BM32_BN32_PAD0_TM2_TN2_VW1 bf16 NT gelu, batch 1") {
    check("BK8_BM32_BN32_PAD0_TM2_TN2_VW1", Dtype::kBF16, "NT", "gelu", skinny_shapes(), 1);
  }
  SECTION("BK8_BM16_BN32_PAD0_TM2_TN4_VW2 f32 TN none, batch 5") {
    check("BK8_BM16_BN32_PAD0_TM2_TN4_VW2", Dtype::kF32, "TN", "none", skinny_shapes(), 5);
  }
  if (test::test_level() >= TestLevel::kFull) {
    for (const char* layout : {"NN", "NT", "TN", "TT"}) {
      SECTION(std::string("full skinny ") + layout) {
        check("BK8_BM16_BN32_PAD0_TM2_TN4_VW2", Dtype::kF32, layout, "bias+relu", skinny_shapes(), 2);
      }
    }
  }
}

TEST_CASE("gemm_simt_tiled broken on purpose fails with a report naming the configuration", "[opencl][gemm][epilogue]") {
  const std::string config = "BK8_BM32_BN32_PAD0_TM2_TN2_VW1";
  const Problem p = gemm_problem(33, 35, 17, 2, Dtype::kF32, "NN", "bias+relu");
  auto expect_named_failure = [&](const TemplateSource& tpl, const char* what) {
    INFO(what);
    test::CoverageRunner runner(tpl, config);
    const std::string failure = runner.run(p, WorkloadKind::kAccumulate);
    CHECK_THAT(failure, Catch::StartsWith("wrong result: template gemm_simt_tiled config " + config + " problem " +
                                          p.key() + " dtype f32 layout NN (second run): first bad index"));
    CHECK_THAT(failure, Catch::Contains("threshold") && Catch::Contains("rerun: kforge tune"));
    CHECK_THAT(failure, Catch::Contains("--config " + config));
  };
  // The untouched template passes the same problem (the edits below are what fails).
  {
    test::CoverageRunner runner("gemm_simt_tiled", config);
    REQUIRE(runner.run(p, WorkloadKind::kAccumulate) == "");
  }
  // Tail indexing: B's last k row is dropped (the tile load's bound is K - 1).
  const TemplateSource k_tail = broken_template("kf_load_chunk(B, N, k0 + r, n0 + c, K, N, Bs, r, c, BS_LD, 0);",
                                                "kf_load_chunk(B, N, k0 + r, n0 + c, K - 1, N, Bs, r, c, BS_LD, 0);");
  expect_named_failure(k_tail, "B tile load drops the last k row");
  // Epilogue indexing: every thread adds its first column's bias.
  const TemplateSource bias_col = broken_template("out += bias[n];", "out += bias[n0 + tx];");
  expect_named_failure(bias_col, "bias read at the thread's first column");
}
