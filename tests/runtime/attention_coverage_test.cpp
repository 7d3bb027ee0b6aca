// attention_flash_simt on PoCL against AttentionOperator's double reference:
// S and SK of 1, small primes and tails around every query and key block,
// D = 64 and 128 (and 1 and odd sizes under the capacity HD), large and
// decode-like shapes (S = 1 .. 16 against long SK), with and without the
// causal mask; f16, bf16 and f32; the plain and the peaked run; NaN reaches
// exactly the outputs that see it.
//
// Tiers (KFORGE_TEST_LEVEL): quick checks fewer shapes; core (CI) builds 5
// instances, each reused across shapes (UNR0 builds take a few seconds on
// PoCL, the unrolled UNR1 default 15 s or more); full adds 64 x 64 blocks,
// more dtypes and masks per configuration, and 8 sampled valid
// configurations, unrolled ones among them.
#include <catch2/catch.hpp>

#include <cmath>

#include "generator/attention_operator.hpp"
#include "generator/search_space.hpp"
#include "generator/workload_builder.hpp"
#include "tests/runtime/coverage_runner.hpp"
#include "tests/test_level.hpp"

using namespace kforge;
using test::TestLevel;

namespace {

const AttentionOperator kOp;

Problem problem(std::int64_t b, std::int64_t h, std::int64_t s, std::int64_t sk, std::int64_t d, bool causal,
                Dtype dtype) {
  return Problem{"attention",
                 {{"B", b}, {"H", h}, {"S", s}, {"SK", sk}, {"D", d}},
                 dtype,
                 {},
                 {},
                 {{"mask", causal ? "causal" : "none"}}};
}

std::int64_t param(const std::string& config, const char* name) { return Config::parse(config)->values.at(name); }

/// Shapes for one configuration: tails around its BQ and BKV, head dims up to
/// its HD, primes, 1, large and decode-like. Causal shapes keep SK >= S.
std::vector<Problem> shapes(const std::string& config, bool causal, Dtype dtype) {
  const bool quick = test::test_level() == TestLevel::kQuick;
  const std::int64_t bq = param(config, "BQ"), bkv = param(config, "BKV"), hd = param(config, "HD");
  const std::int64_t d_odd = hd == 128 ? 72 : 17;
  std::vector<Problem> out;
  auto add = [&](std::int64_t b, std::int64_t h, std::int64_t s, std::int64_t sk, std::int64_t d) {
    out.push_back(problem(b, h, s, causal && sk < s ? s : sk, d, causal, dtype));
  };
  add(1, 1, 1, 1, 1);
  for (std::int64_t s : {bq - 1, bq, bq + 1}) add(1, 2, s, s, d_odd);                   // query tails
  for (std::int64_t sk : {bkv - 1, bkv, bkv + 1, 2 * bkv + 1}) add(2, 1, 7, sk, hd);  // key tails
  add(2, 3, 7, 13, hd);    // small primes
  add(1, 1, 1, 1000, hd);  // decode: one query against long keys
  add(3, 2, 1, 37, d_odd);
  if (!quick) {
    add(1, 2, 33, 65, hd == 128 ? 64 : 1);  // D = 64 under HD = 128; D = 1
    add(1, 1, 16, 1024, hd);                // decode-like: 16 queries
    add(1, 2, 2 * bq + 3, 3 * bkv + 5, d_odd);
    add(1, 2, 256, 256, hd);  // large
  }
  return out;
}

void check(const std::string& config, const std::vector<Problem>& problems) {
  test::CoverageRunner runner("attention_flash_simt", config);
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

void check(const std::string& config, Dtype dtype, bool causal) { check(config, shapes(config, causal, dtype)); }

}  // namespace

TEST_CASE("attention_flash_simt: the kernel file compiles on its own with the prelude", "[opencl][attention]") {
  const TemplateSource& tpl = test::builtin_template("attention_flash_simt");
  const std::string source = "#define UNR 0\n" + std::string(prelude_text("opencl")) + "\n" + tpl.kernel_text;
  CHECK(test::coverage_device().compiler().compile(source, tpl.manifest.kernel, "").ok());
}

TEST_CASE("attention_flash_simt: the default serves D up to 128 and the space is real", "[opencl][attention]") {
  const auto& m = test::builtin_template("attention_flash_simt").manifest;
  CHECK(m.default_config().canonical_name() == "BKV16_BQ16_HD128_KPAD1_NT64_UNR1");
  for (std::int64_t d : {1, 64, 128}) {
    SearchSpace space(m, kOp, problem(1, 8, 1024, 1024, d, true, Dtype::kF16), DeviceLimits::baseline());
    auto valid = space.is_valid(m.default_config());
    REQUIRE(valid.ok());
    CHECK(valid.value());
    auto all = space.enumerate();
    REQUIRE(all.ok());
    CHECK(all->size() > (d <= 64 ? 100u : 50u));
  }
  // D = 129 is past every capacity: no configuration is valid.
  SearchSpace none(m, kOp, problem(1, 1, 8, 8, 129, false, Dtype::kF16), DeviceLimits::baseline());
  auto all = none.enumerate();
  REQUIRE(all.ok());
  CHECK(all->empty());
}

TEST_CASE("attention_flash_simt: dtypes, masks, head dims and blocks", "[opencl][attention]") {
  // The unrolled default once; otherwise UNR0 instances, which build fast and
  // between them cover every dtype and both masks:
  //   default (HD 128, 16 x 16 blocks, 64 threads), unrolled, f16, no mask
  //   the same not unrolled, f16, causal
  //   HD 64 with 32 x 32 blocks on 128 threads, no K padding, bf16, causal
  //   8 x 8 blocks on 32 threads, f32, no mask
  SECTION("default f16 none") { check("BKV16_BQ16_HD128_KPAD1_NT64_UNR1", Dtype::kF16, false); }
  SECTION("UNR0 f16 causal") { check("BKV16_BQ16_HD128_KPAD1_NT64_UNR0", Dtype::kF16, true); }
  SECTION("HD64 bf16 causal") { check("BKV32_BQ32_HD64_KPAD0_NT128_UNR0", Dtype::kBF16, true); }
  SECTION("small f32 none") { check("BKV8_BQ8_HD128_KPAD0_NT32_UNR0", Dtype::kF32, false); }
  if (test::test_level() == TestLevel::kFull) {
    SECTION("default f16 causal") { check("BKV16_BQ16_HD128_KPAD1_NT64_UNR1", Dtype::kF16, true); }
    SECTION("default bf16 causal") { check("BKV16_BQ16_HD128_KPAD1_NT64_UNR1", Dtype::kBF16, true); }
    SECTION("default f32 none") { check("BKV16_BQ16_HD128_KPAD1_NT64_UNR1", Dtype::kF32, false); }
    SECTION("HD64 f16 none") { check("BKV32_BQ32_HD64_KPAD0_NT128_UNR1", Dtype::kF16, false); }
    SECTION("small bf16 causal") { check("BKV8_BQ8_HD128_KPAD0_NT32_UNR0", Dtype::kBF16, true); }
    SECTION("large f16 none") { check("BKV64_BQ64_HD128_KPAD1_NT256_UNR0", Dtype::kF16, false); }
    SECTION("large f16 causal") { check("BKV64_BQ64_HD128_KPAD1_NT256_UNR0", Dtype::kF16, true); }
  }
}

TEST_CASE("attention_flash_simt: NaN reaches exactly the outputs that see it", "[opencl][attention]") {
  // 20 queries and keys over two query blocks and two key blocks, causal: a
  // key is seen from its own position on. The runner requires NaN where the
  // reference is NaN and the tolerance elsewhere.
  test::CoverageRunner runner("attention_flash_simt", "BKV16_BQ16_HD128_KPAD1_NT64_UNR0");
  const Problem p = problem(1, 2, 20, 20, 64, true, Dtype::kF16);
  const std::size_t head = 20 * 64;  // elements per head of Q, K, V
  auto run = [&](const char* tensor, std::size_t index, const char* tensor2 = nullptr, std::size_t index2 = 0) {
    return runner.run(p, WorkloadKind::kPoisonedOutput, 7, [&](Workload& w) {
      store_element(w.tensors[tensor_named(w, tensor)], index, std::nanf(""));
      if (tensor2) store_element(w.tensors[tensor_named(w, tensor2)], index2, std::nanf(""));
    });
  };
  const auto& o = runner.last_output();
  // V[head 1][key 3][d 5]: column 5 of queries 3.. of head 1.
  CHECK(run("V", head + 3 * 64 + 5) == "");
  CHECK(std::isnan(o[head + 3 * 64 + 5]));
  CHECK(std::isfinite(o[head + 2 * 64 + 5]));
  CHECK(std::isfinite(o[3 * 64 + 5]));
  // K[head 0][key 18]: rows 18 and 19 of head 0 (queries 0..15 never load that key block).
  CHECK(run("K", 18 * 64 + 7) == "");
  CHECK(std::isnan(o[18 * 64]));
  CHECK(std::isfinite(o[17 * 64]));
  // K and V of key 9: queries 0..8 share its key block but must not see it.
  CHECK(run("K", 9 * 64 + 1, "V", 9 * 64 + 2) == "");
  CHECK(std::isfinite(o[8 * 64 + 2]));
  CHECK(std::isnan(o[9 * 64 + 2]));
  // Q[head 1][query 17]: that row only.
  CHECK(run("Q", head + 17 * 64 + 63) == "");
  CHECK(std::isnan(o[head + 17 * 64]));
  CHECK(std::isfinite(o[head + 16 * 64]));
}

TEST_CASE("attention_flash_simt: sampled valid configurations are correct", "[opencl][attention]") {
  // Every configuration the constraints admit must be correct. Below the full
  // tier only UNR0 ones (fast builds).
  const bool full = test::test_level() == TestLevel::kFull;
  const std::size_t count = full ? 8 : 1;
  SearchSpace space(test::builtin_template("attention_flash_simt").manifest, kOp,
                    problem(1, 4, 128, 128, 64, false, Dtype::kF16), test::coverage_device().info().limits());
  auto all = space.enumerate();
  REQUIRE(all.ok());
  std::vector<std::string> pool;
  for (const Config& c : *all) {
    if (full || c.values.at("UNR") == 0) pool.push_back(c.canonical_name());
  }
  REQUIRE_FALSE(pool.empty());
  const std::size_t step = std::max<std::size_t>(1, pool.size() / count);
  for (std::size_t i = step / 2; i < pool.size(); i += step) {
    const std::string& c = pool[i];
    SECTION(c) {
      const std::int64_t hd = param(c, "HD");
      check(c, {problem(1, 2, 37, 37, hd == 128 ? 100 : 64, true, Dtype::kF16),
                problem(2, 1, 5, 71, hd == 128 ? 128 : 33, true, Dtype::kF16)});
    }
  }
}
