// One evaluated candidate as the tuner reports it, and its mapping to and
// from the database's result row: the one place those fields are copied.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "db/records.hpp"
#include "tuner/candidate_status.hpp"
#include "tuner/measure/timing_stats.hpp"

namespace kforge {

struct CandidateOutcome {
  std::string template_name;
  std::string config;
  CandidateStatus status = CandidateStatus::kOk;
  std::string reason;
  TimingStats timing;
  double error_norm = 0, error_ratio = 0, compile_ms = 0;
  bool reused = false;  ///< already stored by an earlier run of the same sweep
};

/// The result row of `o`: its name, status, reason, timing (samples
/// included), errors and compile time, with `resources` (a compiler's
/// ResourceReport::to_json, or null) and the timing's clocks as
/// resources_json (resources_with_clocks). The row's ids, compile log and
/// creation time are the caller's.
ResultRecord record_from_outcome(const CandidateOutcome& o, nlohmann::json resources = nullptr);

/// A stored result as an outcome (reused): an unknown status reads as a
/// launch error. Samples, clocks and the median's interval are not read back.
CandidateOutcome outcome_from_record(const ResultRecord& r);

}  // namespace kforge
