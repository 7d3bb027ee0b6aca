// The tuning summary's JSON (what `kforge tune --json` prints, docs/cli.md)
// against its golden file, tests/data/golden/tune_summary.json. After an
// intended change of the layout (bump kTuneSummarySchemaVersion when a key
// is renamed, removed or changes meaning), regenerate and review it:
//
//   KFORGE_UPDATE_GOLDEN=1 build/tests/tuner/tuner_unit_tests "[tune_summary]"
//   git diff tests/data/golden/tune_summary.json
#include "tuner/tune_summary.hpp"

#include <catch2/catch.hpp>

#include "tests/golden_file.hpp"

using namespace kforge;
using kforge::test::check_golden_file;

namespace {

CandidateOutcome outcome(const std::string& config, CandidateStatus status, double median_ms,
                         const std::string& stop) {
  CandidateOutcome o;
  o.template_name = "gemm_tiled";
  o.config = config;
  o.status = status;
  o.timing.median_ms = median_ms;
  o.timing.p20_ms = median_ms * 0.75;
  o.timing.p80_ms = median_ms * 1.25;
  o.timing.min_ms = median_ms * 0.5;
  o.timing.max_ms = median_ms * 1.5;
  o.timing.count = median_ms > 0 ? 12 : 0;
  o.timing.stop = timing_stop_named(stop).value();
  o.error_norm = median_ms > 0 ? 0.0009765625 : 0;
  o.error_ratio = median_ms > 0 ? 0.125 : 0;
  o.compile_ms = 250;
  return o;
}

TimingStats interleaved(double median_ms, double low_ms, double high_ms, const std::string& stop) {
  TimingStats t;
  t.median_ms = median_ms;
  t.count = 8;
  t.ci = {low_ms, high_ms, 0.9375};
  t.stop = timing_stop_named(stop).value();
  return t;
}

/// Every field set, each to a value of its own, so a key rendered from the
/// wrong field shows in the diff.
TuneSummary fixed_summary() {
  TuneSummary s;
  s.sweep_id = 42;
  s.counts = {7, 2, 3};
  s.outcomes = {outcome("BM64_BN64", CandidateStatus::kOk, 1.0, "ci"),
                outcome("BM32_BN64", CandidateStatus::kOk, 0.5, "ci"),
                outcome("BM64_BN32", CandidateStatus::kOk, 0.625, "cut"),
                outcome("BM16_BN16", CandidateStatus::kWrongResult, 0, ""),
                outcome("BM128_BN128", CandidateStatus::kCompileError, 0, "")};
  s.outcomes[3].reason = "element 17: 3.5 against 3.25, threshold 0.0625";
  s.outcomes.push_back(outcome("BM32_BN32", CandidateStatus::kOk, 0.75, "max_reps"));
  s.outcomes.back().reused = true;  // stored earlier: not in timing_stops
  s.winner = s.outcomes[1];
  s.default_result = s.outcomes[0];
  s.stop_reason = "max_evals";
  s.finalists = {{s.outcomes[1], interleaved(0.5, 0.4375, 0.5625, "interleaved")},
                 {s.outcomes[2], interleaved(0.53125, 0.5, 0.59375, "interleaved")},
                 {s.outcomes[0], interleaved(1.0, 0.9375, 1.0625, "raced")}};
  s.retiming = {2, "the winner stands unsettled after 2 re-timings", 1};
  s.search.skipped_templates = {{"gemm_mma_sync", "needs sm_80 or newer"}};
  s.search.partial_spaces = {{"gemm_tiled", "a sample of 4096 of 65536 configurations"}};
  s.search.warm_starts = {{"gemm_tiled", "BM32_BN64", "gemm:M=128,N=128,K=128", 1.5}};
  s.times = {1.5, 2.25, 3.125, 0.75, 0.5, 9.0};
  s.pipeline.compile_overlap = true;
  s.pipeline.cache_hits = 11;
  s.pipeline.compiled_ahead = 12;
  s.pipeline.compiled_alone = 13;
  s.pipeline.guessed_ahead = 14;
  s.pipeline.validated_ahead = 15;
  s.pipeline.generated_ahead = 16;
  s.pipeline.compiled_combined = 17;
  s.pipeline.compile_ahead_stopped = "a batch failed to compile ahead";
  s.worker = {21, 22, 23, 24, 25, 26};
  return s;
}

}  // namespace

TEST_CASE("the tuning summary's JSON matches its golden file", "[tune_summary]") {
  const double flops = 2.0 * 64 * 64 * 64;
  check_golden_file("tune_summary.json", to_json(fixed_summary(), flops).dump(2) + "\n");
}

TEST_CASE("the tuning summary's JSON carries its schema version", "[tune_summary]") {
  const nlohmann::json j = to_json(TuneSummary{}, 1);
  CHECK(j.at("schema_version") == kTuneSummarySchemaVersion);
  CHECK(j.at("winner").is_null());
  CHECK(j.at("default").is_null());
  CHECK(j.at("compile_ahead_stopped").is_null());
  CHECK_FALSE(j.contains("speedup_vs_default"));
}
