// Worker, timeout and cache flags for tune and sweep.
#include "tools/runner_flags.hpp"

#include "tools/cli_common.hpp"

namespace kforge::cli {

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

}  // namespace kforge::cli
