// Flags that say where and how candidates run, shared by `tune` and `sweep`:
// the supervised worker process (default) or this process, its timeouts,
// and the on-disk binary cache.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "tuner/tuner.hpp"

namespace kforge::cli {

struct RunnerOptions {
  bool in_process = false;  ///< --in-process: no worker, a crashing candidate ends the run
  double launch_timeout_s = WorkerTimeouts{}.launch_floor_s;
  double compile_timeout_s = WorkerTimeouts{}.compile_s;
  double reference_timeout_s = WorkerTimeouts{}.reference_s;
  std::string cache_dir;    ///< empty: BinaryCache::default_dir()
  bool no_cache = false;
  int compile_threads = 0;  ///< 0: from cores and memory; -1: no compiling ahead
  std::string compile_overlap = "auto";  ///< auto, on, off: compiling ahead while measuring
  bool strategy_order = false;  ///< time each batch in the strategy's order, not fastest first
};

void add_runner_flags(CLI::App& cmd, RunnerOptions& r);
/// This executable (/proc/self/exe), for the processes it starts: the
/// worker is `kforge __worker FD`, a profile launch `kforge __profile-launch ...`.
std::string self_executable();
/// Fills the request's worker command, timeouts and cache directory.
void apply_runner_options(const RunnerOptions& r, TuneRequest& request);

}  // namespace kforge::cli
