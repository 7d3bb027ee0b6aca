// What bounds a kernel, from its counters and the device's ceilings: a pure
// classification (memory-bound, compute-bound, latency/occupancy-bound,
// launch-bound) with the two numbers that justify it (docs/profiling.md,
// "Bound verdict"). Where no counter was read it uses the operator's byte
// and flop model and says so.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/records.hpp"

namespace kforge::report {

/// A fraction of a ceiling at or above this is that ceiling's bound.
inline constexpr double kBoundFraction = 0.6;
/// A launch shorter than this (microseconds) that reaches no ceiling is launch-bound.
inline constexpr double kLaunchBoundUs = 10.0;

struct BoundEvidence {
  double median_ms = 0;
  double model_bytes = 0, model_flops = 0;  ///< the operator's counts (0: unknown)
  std::optional<double> dram_bytes;         ///< measured, read + written
  /// Busy fractions (0..1) of the tensor and FMA pipes, achieved occupancy,
  /// and the profiler's own fractions of the DRAM and SM peaks.
  std::optional<double> tensor_pipe, fma_pipe, occupancy, dram_peak, sm_peak;
  double bandwidth_gbs = 0, peak_gflops = 0;  ///< ceilings; 0: unknown
  std::string bandwidth_name = "copy bandwidth", flops_name = "peak FLOP/s";
};

enum class Bound { kMemory, kCompute, kLatency, kLaunch, kUnknown };
std::string_view bound_name(Bound b);  ///< "memory-bound", ..., "unknown"

struct BoundVerdict {
  Bound bound = Bound::kUnknown;
  /// The two numbers that justify it, with what they are.
  double first = 0, second = 0;
  std::string first_name, second_name;
  bool from_model = false;  ///< no counter was read: bytes and flops are the model's
  std::string text;         ///< "memory-bound at 0.88 of copy bandwidth, 0.25 flop/byte"
  nlohmann::json to_json() const;
};

BoundVerdict classify_bound(const BoundEvidence& e);

/// The evidence in a result's stored counters (ncu's metrics, the model's
/// counts) for a result whose median is `median_ms`; ceilings left unset.
BoundEvidence evidence_from_counters(const std::vector<CounterRecord>& rows, double median_ms);

}  // namespace kforge::report
