// Runs a program as a child process and collects what it prints: the way
// kforge uses a compiler whose LLVM must not share a process with PoCL's and
// hipRTC's LLVM 15 (clang-22 for offline HIP, docs/compile-only.md).
#pragma once

#include <string>
#include <vector>

#include "core/result.hpp"

namespace kforge {

struct SubprocessResult {
  int exit_code = -1;  ///< the program's exit status; 128 + N when signal N ended it
  std::string output;  ///< stdout and stderr together, in the order written
};

/// Runs argv[0] (looked up in PATH when it has no '/') with `argv`, waits for
/// it and returns its exit status and output. kNotFound when the program
/// cannot be started; a program that fails is a result, not an error.
Result<SubprocessResult> run_subprocess(const std::vector<std::string>& argv);

/// The absolute path of `program` in PATH (or `program` itself when it has a
/// '/' and is executable); empty when there is none.
std::string find_program(const std::string& program);

}  // namespace kforge
