// The outcome of evaluating one candidate. A failed candidate is data, stored
// like any other result, never the end of a sweep.
#pragma once

#include <optional>
#include <string_view>

#include "core/result.hpp"

namespace kforge {

enum class CandidateStatus {
  kOk,
  kCompileError,
  kResourceLimit,
  kLaunchError,
  kCrash,
  kTimeout,
  kWrongResult,
  kNotSupported,
  /// Its results matched the reference on a device that does not time
  /// (the Triton interpreter): correct logic, no timing, never a winner.
  kValidated,
};

std::string_view status_name(CandidateStatus s);  ///< "ok", "compile_error", ...
std::optional<CandidateStatus> parse_status(std::string_view s);
/// The status a failed step's error code maps to.
CandidateStatus status_for(ErrorCode code);

}  // namespace kforge
