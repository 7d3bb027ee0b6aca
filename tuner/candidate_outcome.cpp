// CandidateOutcome <-> ResultRecord.
#include "tuner/candidate_outcome.hpp"

namespace kforge {

ResultRecord record_from_outcome(const CandidateOutcome& o, nlohmann::json resources) {
  ResultRecord rec;
  rec.template_name = o.template_name;
  rec.config = o.config;
  rec.status = std::string(status_name(o.status));
  rec.reason = o.reason;
  rec.median_ms = o.timing.median_ms;
  rec.p20_ms = o.timing.p20_ms;
  rec.p80_ms = o.timing.p80_ms;
  rec.min_ms = o.timing.min_ms;
  rec.max_ms = o.timing.max_ms;
  rec.count = o.timing.count;
  rec.samples_json = nlohmann::json(o.timing.samples_ms).dump();
  rec.error_norm = o.error_norm;
  rec.error_ratio = o.error_ratio;
  rec.compile_ms = o.compile_ms;
  rec.resources_json = resources_with_clocks(std::move(resources), o.timing).dump();
  return rec;
}

CandidateOutcome outcome_from_record(const ResultRecord& r) {
  CandidateOutcome o;
  o.template_name = r.template_name;
  o.config = r.config;
  o.status = parse_status(r.status).value_or(CandidateStatus::kLaunchError);
  o.reason = r.reason;
  o.timing.median_ms = r.median_ms;
  o.timing.p20_ms = r.p20_ms;
  o.timing.p80_ms = r.p80_ms;
  o.timing.min_ms = r.min_ms;
  o.timing.max_ms = r.max_ms;
  o.timing.count = r.count;
  o.error_norm = r.error_norm;
  o.error_ratio = r.error_ratio;
  o.compile_ms = r.compile_ms;
  o.reused = true;
  return o;
}

}  // namespace kforge
