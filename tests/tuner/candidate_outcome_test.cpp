// An outcome and its result row: every column the tuner stores is the
// outcome's, and a stored row reads back as the same outcome.
#include "tuner/candidate_outcome.hpp"

#include <catch2/catch.hpp>

using namespace kforge;

namespace {

CandidateOutcome evaluated() {
  CandidateOutcome o;
  o.template_name = "gemm_tiled";
  o.config = "BM32_BN64";
  o.status = CandidateStatus::kWrongResult;
  o.reason = "element 3: 2.5 against 2.25";
  o.timing = TimingStats::from_samples({0.5, 0.75, 0.625, 1.0, 0.5625});
  o.error_norm = 0.25;
  o.error_ratio = 4;
  o.compile_ms = 125;
  return o;
}

}  // namespace

TEST_CASE("an outcome's result row holds its name, status, timing and errors", "[candidate_outcome]") {
  const CandidateOutcome o = evaluated();
  const ResultRecord r = record_from_outcome(o, {{"registers", 40}});
  CHECK(r.template_name == "gemm_tiled");
  CHECK(r.config == "BM32_BN64");
  CHECK(r.status == "wrong_result");
  CHECK(r.reason == o.reason);
  CHECK(r.median_ms == o.timing.median_ms);
  CHECK(r.p20_ms == o.timing.p20_ms);
  CHECK(r.p80_ms == o.timing.p80_ms);
  CHECK(r.min_ms == 0.5);
  CHECK(r.max_ms == 1.0);
  CHECK(r.count == 5);
  CHECK(nlohmann::json::parse(r.samples_json) == nlohmann::json({0.5, 0.75, 0.625, 1.0, 0.5625}));
  CHECK(r.error_norm == 0.25);
  CHECK(r.error_ratio == 4);
  CHECK(r.compile_ms == 125);
  CHECK(nlohmann::json::parse(r.resources_json) == nlohmann::json({{"registers", 40}}));
  // Ids, the log and the time are the caller's.
  CHECK(r.sweep_id == 0);
  CHECK(r.compile_log.empty());
  CHECK(r.created_at.empty());
}

TEST_CASE("an outcome without resources stores an empty object", "[candidate_outcome]") {
  CHECK(record_from_outcome(evaluated()).resources_json == "{}");
}

TEST_CASE("a stored row reads back as the outcome that wrote it, reused", "[candidate_outcome]") {
  const CandidateOutcome o = evaluated();
  const CandidateOutcome back = outcome_from_record(record_from_outcome(o));
  CHECK(back.template_name == o.template_name);
  CHECK(back.config == o.config);
  CHECK(back.status == o.status);
  CHECK(back.reason == o.reason);
  CHECK(back.timing.median_ms == o.timing.median_ms);
  CHECK(back.timing.p20_ms == o.timing.p20_ms);
  CHECK(back.timing.p80_ms == o.timing.p80_ms);
  CHECK(back.timing.min_ms == o.timing.min_ms);
  CHECK(back.timing.max_ms == o.timing.max_ms);
  CHECK(back.timing.count == o.timing.count);
  CHECK(back.error_norm == o.error_norm);
  CHECK(back.error_ratio == o.error_ratio);
  CHECK(back.compile_ms == o.compile_ms);
  CHECK(back.reused);
}

TEST_CASE("a stored row with a status this version does not know reads as a launch error",
          "[candidate_outcome]") {
  ResultRecord r;
  r.status = "melted";
  CHECK(outcome_from_record(r).status == CandidateStatus::kLaunchError);
}
