// NVIDIA counters through Nsight Compute: runs `ncu` on kforge's
// profile-launch mode (one configuration in a process of its own) and reads
// the raw page of its CSV (runtime/profiling/ncu_csv.hpp). The timings stored for the
// result are never from this process (docs/profiling.md).
#pragma once

#include <string>
#include <vector>

#include "runtime/profiling/counter_collection.hpp"

namespace kforge {

/// The metrics asked of ncu: DRAM bytes and throughput, L1 and L2 hit rates,
/// achieved occupancy, tensor and FMA pipe utilisation, shared-memory bank
/// conflicts, registers, the kernel's duration and the warp-stall reasons.
const std::vector<std::string>& ncu_metrics();

struct NcuRun {
  std::string ncu;                    ///< the ncu executable
  std::vector<std::string> launcher;  ///< the command that launches the configuration
  std::string kernel_name;            ///< only launches of this kernel are profiled; empty: the first launch
  std::string log_file;               ///< where ncu writes its CSV
  std::string output_file;            ///< the launcher's and ncu's other output
  double timeout_s = 600;
};

/// The argv that runs `run`: ncu's options, then the launcher.
std::vector<std::string> ncu_command(const NcuRun& run);

/// "ncu 2025.1.1.0" from `ncu --version`, or "ncu (version unknown)".
std::string ncu_version(const std::string& ncu, const std::string& scratch_file);

/// Runs ncu and reads its one profiled launch; unavailable, saying why, when
/// ncu is absent, fails, or profiles nothing.
CounterCollection collect_ncu(const NcuRun& run);

/// The collection for the first kernel row of `csv` (ncu's log), or
/// unavailable saying why; `source` names the log in messages.
CounterCollection ncu_collection_from_csv(const std::string& csv, const std::string& source,
                                          const std::string& tool);

}  // namespace kforge
