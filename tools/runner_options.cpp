// Worker, timeout and cache flags for tune and sweep.
#include "tools/runner_options.hpp"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <iostream>

#include "runtime/kinds/binary_cache.hpp"
#include "tools/cli_common.hpp"

namespace kforge::cli {

std::string self_executable() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw ErrorException(Error::internal("cannot find this executable (/proc/self/exe) to start workers"));
  return std::string(buf, static_cast<std::size_t>(n));
}

namespace {

/// The binary cache directory to use: `--cache-dir` (bad input when unusable),
/// else the default ($KFORGE_CACHE_DIR, ...), which when unusable costs a
/// warning and a run without the disk cache, as for the runtime's lookup.
std::string usable_cache_dir(const std::string& flag) {
  const std::string dir = flag.empty() ? BinaryCache::default_dir() : flag;
  auto cache = BinaryCache::open(dir);
  if (cache.ok()) return dir;
  if (!flag.empty()) throw ErrorException(Error::bad_input("--cache-dir: " + cache.error().message));
  const char* env = std::getenv("KFORGE_CACHE_DIR");
  std::cerr << "kforge: warning: " << cache.error().message
            << (env && *env ? " (from KFORGE_CACHE_DIR)" : "") << "; compiling without the disk cache\n";
  return "";
}

}  // namespace

void add_runner_flags(CLI::App& cmd, RunnerOptions& r) {
  cmd.add_flag("--in-process", r.in_process,
               "Run candidates in this process instead of a supervised worker (a crashing or hanging "
               "candidate then ends the run; for debugging)");
  cmd.add_option("--launch-timeout", r.launch_timeout_s,
                 "Seconds a candidate's launches may take before the worker is killed and the candidate "
                 "recorded as timeout; grows with the best time so far, before any with the candidate's "
                 "first launch; once that launch runs (its code generated), what is left is 2 s plus the "
                 "timing budget plus 10x the expected launches (docs/measurement.md)")
      ->check(finite_at_least(0, false))
      ->capture_default_str();
  cmd.add_option("--compile-timeout", r.compile_timeout_s, "Seconds one candidate's compile may take")
      ->check(finite_at_least(0, false))
      ->capture_default_str();
  cmd.add_option("--reference-timeout", r.reference_timeout_s,
                 "Seconds a declared operator's reference library may take to compute the references "
                 "(docs/user-operators.md)")
      ->check(finite_at_least(0, false))
      ->capture_default_str();
  cmd.add_option("--cache-dir", r.cache_dir,
                 "On-disk binary cache shared with later runs and the runtime (default: $KFORGE_CACHE_DIR, "
                 "else ~/.cache/kforge/binaries)");
  cmd.add_flag("--no-cache", r.no_cache, "Compile every candidate; neither read nor write the binary cache");
  cmd.add_option("--compile-threads", r.compile_threads,
                 "Threads compiling the next candidates ahead; on PoCL, code-generator processes (0: from the usable "
                 "CPUs (affinity, cgroup quota) and available memory; -1: compile each candidate on its own)")
      ->check(CLI::Range(-1, 256))
      ->capture_default_str();
  cmd.add_option("--compile-overlap", r.compile_overlap,
                 "Compile the next candidates (an adaptive strategy's likely next) while the device measures: "
                 "auto (on a GPU, not on a CPU "
                 "device, whose kernels share the cores with the compiler), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  cmd.add_flag("--strategy-order", r.strategy_order,
               "Time each batch compiled between timed runs in the strategy's order, instead of validating it "
               "first and timing its fastest first");
}

void apply_runner_options(const RunnerOptions& r, TuneRequest& request) {
  if (!r.in_process) request.worker_command = {self_executable(), "__worker"};
  request.timeouts.launch_floor_s = r.launch_timeout_s;
  request.timeouts.compile_s = r.compile_timeout_s;
  request.timeouts.reference_s = r.reference_timeout_s;
  request.compile_threads = r.compile_threads;
  request.compile_overlap = r.compile_overlap == "on"    ? TuneRequest::CompileOverlap::kOn
                            : r.compile_overlap == "off" ? TuneRequest::CompileOverlap::kOff
                                                         : TuneRequest::CompileOverlap::kAuto;
  request.fastest_first = !r.strategy_order;
  if (!r.no_cache) request.cache_dir = usable_cache_dir(r.cache_dir);
}

}  // namespace kforge::cli
