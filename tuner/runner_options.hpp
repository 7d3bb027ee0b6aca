// Where and how candidates run, shared by `kforge tune`, `kforge sweep` and
// the Python package: the supervised worker process (default) or this
// process, its timeouts, the on-disk binary cache and compiling ahead.
#pragma once

#include <string>
#include <vector>

#include "core/result.hpp"
#include "tuner/tuner.hpp"

namespace kforge {

struct RunnerOptions {
  bool in_process = false;  ///< no worker: a crashing candidate ends the run
  /// The worker process's command line; empty: this executable's `__worker`
  /// (the CLI's). The Python package names `python -m kforge._worker`.
  std::vector<std::string> worker_command;
  double launch_timeout_s = WorkerTimeouts{}.launch_floor_s;
  double compile_timeout_s = WorkerTimeouts{}.compile_s;
  double reference_timeout_s = WorkerTimeouts{}.reference_s;
  std::string cache_dir;    ///< empty: BinaryCache::default_dir()
  bool no_cache = false;
  int compile_threads = 0;  ///< 0: from cores and memory; -1: no compiling ahead
  std::string compile_overlap = "auto";  ///< auto, on, off: compiling ahead while measuring
  bool strategy_order = false;  ///< time each batch in the strategy's order, not fastest first
};

/// This executable (/proc/self/exe), for the processes it starts: the
/// worker is `kforge __worker FD`, a profile launch `kforge __profile-launch ...`.
Result<std::string> self_executable();

/// Fills the request's worker command, timeouts and cache directory. A
/// `cache_dir` that cannot be used is bad input; the default one that cannot
/// be used costs a warning on stderr and a run without the disk cache.
Status apply_runner_options(const RunnerOptions& r, TuneRequest& request);

}  // namespace kforge
