// Which hardware-counter collectors apply to a device, and running them for
// one stored configuration in a process of its own (kforge's profile-launch
// mode): perf_event_open on CPU devices, Nsight Compute on NVIDIA GPUs,
// rocprofiler's availability on AMD GPUs (docs/profiling.md). Each collector
// gives a collection or says why not; nothing here changes a stored timing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/device/device_info.hpp"
#include "runtime/profiling/counter_collection.hpp"
#include "tuner/candidate_runner.hpp"

namespace kforge {

struct ProfileSetup {
  RunnerSetup runner;                 ///< rebuilds the tuning context in the launched process
  std::vector<std::string> launcher;  ///< {kforge, "__profile-launch"}
  DeviceInfo device;
  /// Run the collectors that can run here (kforge tune --profile); false:
  /// only record, cheaply, what is available and why the rest is not.
  bool collect = false;
  double timeout_s = 600;
  std::string work_dir;  ///< an existing directory for the setup file and the collectors' logs
  std::string path;      ///< $PATH to find profilers on; empty: this process's
};

struct ProfileTarget {
  std::int64_t result_id = 0;
  std::string template_name, config;
  std::string kernel_name;  ///< the generated kernel's name; empty for a library call
};

/// The collectors that apply to `device`: "perf" on a CPU device, "ncu" on
/// an NVIDIA GPU, "rocprofiler" on an AMD GPU; none elsewhere.
std::vector<std::string> collectors_for(const DeviceInfo& device);

/// One collection per collector that applies (an unavailable one saying why
/// where none applies, so that every profiled result has a row).
std::vector<CounterCollection> profile_target(const ProfileSetup& s, const ProfileTarget& t);

/// The operator's own byte and flop counts as a "model" collection: what the
/// bound verdict falls back to where no counter was read.
CounterCollection model_collection(double bytes, double flops);

}  // namespace kforge
