// Running an external command (a profiler wrapping kforge's profile-launch
// mode) with its output in a file and a deadline, and finding commands on
// PATH, for the counter collectors (docs/profiling.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace kforge {

struct CommandOutcome {
  bool exited = false;  ///< exited on its own (else killed: timeout or signal)
  int exit_code = -1;   ///< when exited
  std::string how;      ///< "exited with status 1", "killed after the 600 s timeout", ...
};

/// Runs `argv` (argv[0] a path) with stdout and stderr appended to
/// `output_file`, killing it (and what it started in its process group)
/// after `timeout_s`. An error only when it cannot be started.
Result<CommandOutcome> run_command(const std::vector<std::string>& argv, const std::string& output_file,
                                   double timeout_s);

/// The first executable `name` on $PATH (or `path` when given), or nullopt.
std::optional<std::string> find_on_path(const std::string& name, const char* path = nullptr);

}  // namespace kforge
