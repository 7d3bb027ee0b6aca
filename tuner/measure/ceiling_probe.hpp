// The peaks of a device, measured by kforge's own kernels so every result can
// be placed against them (docs/profiling.md, "Measured ceilings"): the
// device-to-device copy bandwidth (float4 grid-stride copy) and the FP32
// FMA throughput (eight independent FMA chains per thread). Each kernel's
// output is checked before its time counts.
#pragma once

#include <cstdint>
#include <string>

#include "core/result.hpp"
#include "runtime/device/backend.hpp"

namespace kforge {

struct CeilingProbeOptions {
  std::int64_t copy_bytes = 512ll << 20;  ///< per buffer; capped by the device's limits
  int repetitions = 7;                    ///< timed launches; the median counts
  double fma_target_ms = 20;              ///< the FMA loop is lengthened until a launch takes this long
};

struct MeasuredPeak {
  double value = 0;    ///< GB/s or GFLOP/s
  double median_ms = 0;
  std::string method;  ///< what ran, in words
};

struct MeasuredPeaks {
  MeasuredPeak copy_bandwidth;  ///< GB/s, bytes read + written
  MeasuredPeak fp32_fma;        ///< GFLOP/s, an FMA counted as 2
};

/// Measures both peaks on `device`. A kernel whose output is wrong is a
/// kInternal error naming the element; nothing is timed from it.
Result<MeasuredPeaks> measure_peaks(Device& device, const CeilingProbeOptions& options = {});

}  // namespace kforge
