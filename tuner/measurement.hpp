// The timing protocol: warm-up, cache flush before every timed repetition,
// device-event timing, repetitions until the count or the budget is reached.
// docs/measurement.md describes it; its settings are stored with each sweep.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "backend.hpp"
#include "timing_stats.hpp"

namespace kforge {

struct MeasurementProtocol {
  int warmup = 2;           ///< untimed launches first
  int min_reps = 5;         ///< always at least this many timed launches
  int max_reps = 30;
  double budget_ms = 400;   ///< stop after min_reps once this much wall time is spent
  bool flush_cache = true;  ///< evict the last-level cache before each timed launch

  nlohmann::json to_json() const;
};

Result<TimingStats> measure(Device& device, Kernel& kernel, const std::vector<KernelArg>& args,
                            const LaunchGeometry& geometry, const MeasurementProtocol& protocol);

}  // namespace kforge
