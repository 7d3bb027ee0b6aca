// What a device's clocks were at one moment: core and memory clock,
// temperature, power and why the clocks are held down, as far as the source
// (NVML on NVIDIA GPUs, the host's cpufreq for CPU devices) can tell.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace kforge {

/// One reading. Quantities the source cannot read stay -1.
struct ClockSample {
  double core_mhz = -1;       ///< SM clock on a GPU; the mean over cores on a CPU
  double memory_mhz = -1;
  double temperature_c = -1;
  double power_w = -1;
  /// Whether the source reports why clocks are limited at all (NVML does;
  /// the host CPU reader does not, and then `throttled` is always false).
  bool reasons_known = false;
  std::uint64_t reasons_mask = 0;    ///< the source's own bits (NVML clocks event reasons)
  std::vector<std::string> reasons;  ///< the set bits by name, e.g. "sw_thermal_slowdown"
  /// A reason that slows kernels down is active: thermal or power slowdown,
  /// a power cap, a power brake. Idle, application/display clock settings and
  /// sync boost are not throttling.
  bool throttled = false;
  /// CPU devices: the host's CPU time, in clock ticks over all cores, since
  /// the reader's previous reading (or its restart()), and the part of it
  /// that other processes used; -1: not read. Other load on the cores a
  /// CPU device's kernel runs on slows it down as throttling would.
  double cpu_ticks = -1, other_cpu_ticks = -1;
  /// CPU devices: since the previous reading (or restart()), the time in
  /// which tasks waited for a busy core (the kernel's pressure stall
  /// information, /proc/pressure/cpu "some", which averages it over the
  /// cores) and the wall time, both in microseconds; -1: not read. A clock
  /// tick is 10 ms, so cpu_ticks says nothing of a kernel timed for less
  /// than about 50 ms in all; these count microseconds.
  double cpu_wait_us = -1, wall_us = -1;
  /// GPU devices: the processes with a compute context on the device at the
  /// reading, this one included (NVML); -1: not read. More than one: another
  /// program may be running kernels beside the timed ones.
  int gpu_processes = -1;
};

/// Reads a device's clocks; cheap enough to call after every timed launch.
class ClockReader {
 public:
  virtual ~ClockReader() = default;
  /// Where the readings come from: "nvml", "cpufreq", "/proc/cpuinfo".
  virtual const std::string& source() const = 0;
  /// The clocks now. A failure concerns this reading alone; the next may work.
  virtual Result<ClockSample> read() = 0;
  /// Begins a series of readings: what a reading counts since the previous
  /// one (ClockSample::cpu_ticks) counts from here for the first.
  virtual void restart() {}
};

}  // namespace kforge
