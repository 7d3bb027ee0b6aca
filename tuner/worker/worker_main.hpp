// The worker process's side (tuner/worker/worker_runner.hpp): reads the setup,
// opens the device, builds an CandidateEvaluator and serves evaluate and retime
// requests until told to quit or its socket closes. Reached through the
// kforge binary's hidden first argument `__worker FD`; its profile-launch
// mode, `__profile-launch`, builds the same context for one configuration.
#pragma once

#include <string>
#include <vector>

namespace kforge {

/// Serves the tuner on descriptor `fd`; returns the process exit status.
int run_tuner_worker(int fd);

/// The profile-launch mode, `kforge __profile-launch SETUP TEMPLATE CONFIG
/// [perf]` (docs/profiling.md): rebuilds the tuning context from the setup
/// file (RunnerSetup as JSON), validates the configuration and launches it
/// once more, counted by perf_event_open with `perf`, or by a profiler
/// (ncu) wrapped round this process. Prints one line to stdout:
/// `kforge-profile: {"status":..,"reason":..,"perf":{CounterCollection}}`.
/// 0 when the configuration passed validation and was launched.
int run_profile_launch(const std::vector<std::string>& args);

/// What run_profile_launch's line starts with.
inline constexpr const char* kProfileLinePrefix = "kforge-profile: ";

}  // namespace kforge
