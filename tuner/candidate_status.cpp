// Candidate status names.
#include "tuner/candidate_status.hpp"

#include <array>
#include <utility>

namespace kforge {

namespace {
constexpr std::array<std::pair<CandidateStatus, std::string_view>, 9> kNames{{
    {CandidateStatus::kOk, "ok"},
    {CandidateStatus::kCompileError, "compile_error"},
    {CandidateStatus::kResourceLimit, "resource_limit"},
    {CandidateStatus::kLaunchError, "launch_error"},
    {CandidateStatus::kCrash, "crash"},
    {CandidateStatus::kTimeout, "timeout"},
    {CandidateStatus::kWrongResult, "wrong_result"},
    {CandidateStatus::kNotSupported, "not_supported"},
    {CandidateStatus::kValidated, "validated"},
}};
}  // namespace

std::string_view status_name(CandidateStatus s) {
  for (const auto& [k, v] : kNames) {
    if (k == s) return v;
  }
  return "?";
}

std::optional<CandidateStatus> parse_status(std::string_view s) {
  for (const auto& [k, v] : kNames) {
    if (v == s) return k;
  }
  return std::nullopt;
}

CandidateStatus status_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::kCompile: return CandidateStatus::kCompileError;
    case ErrorCode::kResource: return CandidateStatus::kResourceLimit;
    case ErrorCode::kUnsupported: return CandidateStatus::kNotSupported;
    default: return CandidateStatus::kLaunchError;
  }
}

}  // namespace kforge
