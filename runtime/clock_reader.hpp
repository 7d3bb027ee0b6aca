// What a device's clocks were at one moment: core and memory clock,
// temperature, power and why the clocks are held down, as far as the source
// (NVML on NVIDIA GPUs, the host's cpufreq for CPU devices) can tell.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "result.hpp"

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
};

/// Reads a device's clocks; cheap enough to call after every timed launch.
class ClockReader {
 public:
  virtual ~ClockReader() = default;
  /// Where the readings come from: "nvml", "cpufreq", "/proc/cpuinfo".
  virtual const std::string& source() const = 0;
  /// The clocks now. A failure concerns this reading alone; the next may work.
  virtual Result<ClockSample> read() = 0;
};

}  // namespace kforge
