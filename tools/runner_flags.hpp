// The flags of tune and sweep that fill RunnerOptions (tuner/runner_options.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include "tuner/runner_options.hpp"

namespace kforge::cli {

void add_runner_flags(CLI::App& cmd, RunnerOptions& r);

}  // namespace kforge::cli
