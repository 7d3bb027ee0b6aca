// Summary of a candidate's timed repetitions.
#pragma once

#include <cstdint>
#include <vector>

namespace kforge {

struct TimingStats {
  double median_ms = 0, p20_ms = 0, p80_ms = 0, min_ms = 0, max_ms = 0;
  std::int64_t count = 0;
  std::vector<double> samples_ms;  ///< in the order they were taken

  /// Percentiles by linear interpolation between order statistics.
  static TimingStats from_samples(std::vector<double> samples_ms);
};

/// The q-quantile (0..1) of `sorted`, linear interpolation; 0 when empty.
double quantile(const std::vector<double>& sorted, double q);

}  // namespace kforge
