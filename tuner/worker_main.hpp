// The worker process's side (tuner/worker_runner.hpp): reads the setup,
// opens the device, builds an InProcessRunner and serves evaluate and retime
// requests until told to quit or its socket closes. Reached through the
// kforge binary's hidden first argument `__worker FD`.
#pragma once

namespace kforge {

/// Serves the tuner on descriptor `fd`; returns the process exit status.
int run_tuner_worker(int fd);

}  // namespace kforge
