// The runner options applied to a tune request.
#include "tuner/runner_options.hpp"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <iostream>

#include "runtime/kinds/binary_cache.hpp"

namespace kforge {

Result<std::string> self_executable() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return Error::internal("cannot find this executable (/proc/self/exe) to start workers");
  return std::string(buf, static_cast<std::size_t>(n));
}

namespace {

/// The binary cache directory to use: `dir` (bad input when unusable), else
/// the default ($KFORGE_CACHE_DIR, ...), which when unusable costs a warning
/// and a run without the disk cache, as for the runtime's lookup.
Result<std::string> usable_cache_dir(const std::string& flag) {
  const std::string dir = flag.empty() ? BinaryCache::default_dir() : flag;
  auto cache = BinaryCache::open(dir);
  if (cache.ok()) return dir;
  if (!flag.empty()) return Error::bad_input("--cache-dir: " + cache.error().message);
  const char* env = std::getenv("KFORGE_CACHE_DIR");
  std::cerr << "kforge: warning: " << cache.error().message
            << (env && *env ? " (from KFORGE_CACHE_DIR)" : "") << "; compiling without the disk cache\n";
  return std::string();
}

}  // namespace

Status apply_runner_options(const RunnerOptions& r, TuneRequest& request) {
  if (!r.in_process) {
    if (!r.worker_command.empty()) {
      request.worker_command = r.worker_command;
    } else {
      KF_TRY_ASSIGN(self, self_executable());
      request.worker_command = {self, "__worker"};
    }
  }
  request.timeouts.launch_floor_s = r.launch_timeout_s;
  request.timeouts.compile_s = r.compile_timeout_s;
  request.timeouts.reference_s = r.reference_timeout_s;
  request.compile_threads = r.compile_threads;
  request.compile_overlap = r.compile_overlap == "on"    ? TuneRequest::CompileOverlap::kOn
                            : r.compile_overlap == "off" ? TuneRequest::CompileOverlap::kOff
                                                         : TuneRequest::CompileOverlap::kAuto;
  request.fastest_first = !r.strategy_order;
  if (!r.no_cache) {
    KF_TRY_ASSIGN(dir, usable_cache_dir(r.cache_dir));
    request.cache_dir = dir;
  }
  return ok_status();
}

}  // namespace kforge
