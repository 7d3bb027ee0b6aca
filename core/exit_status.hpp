// How a kforge process ends (docs/cli.md, "Exit status"): the codes, and the
// exception a step throws once the reason is reported, so that the process
// exits with that code and prints nothing more (the CLI's commands; the
// ranks of a distributed sweep, where one rank reports for all).
#pragma once

#include "core/result.hpp"

namespace kforge {

/// Exit codes besides 0: any other failure, bad input, a comparison that
/// found a regression, a tune in which no candidate passed.
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitRegression = 3;
inline constexpr int kExitNoCandidatePassed = 4;

/// Thrown once the output is written; main returns `code` after the
/// step's objects are destroyed.
struct ExitStatus {
  int code;
};

/// Bad input (kBadInput, kNotFound: exit 2) or any other failure (1).
inline int exit_code_for(const Error& e) {
  return e.code == ErrorCode::kBadInput || e.code == ErrorCode::kNotFound ? kExitBadInput : kExitFailure;
}

}  // namespace kforge
