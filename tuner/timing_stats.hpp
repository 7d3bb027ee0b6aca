// Summary of a candidate's timed repetitions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kforge {

/// A distribution-free confidence interval of the median: order statistics
/// [x_(j), x_(n+1-j)] whose coverage follows from the binomial distribution.
struct MedianInterval {
  double low_ms = 0, high_ms = 0;
  double coverage = 0;  ///< probability the interval holds the true median
};

/// The narrowest such interval with coverage >= `confidence`; with too few
/// samples for that (n < 6 at 95%), [min, max] and its smaller coverage.
MedianInterval median_interval(std::vector<double> samples_ms, double confidence = 0.95);

struct TimingStats {
  double median_ms = 0, p20_ms = 0, p80_ms = 0, min_ms = 0, max_ms = 0;
  std::int64_t count = 0;
  std::vector<double> samples_ms;  ///< in the order they were taken
  MedianInterval ci;               ///< 95% interval of the median
  std::string stop;                ///< why repetitions stopped: "ci", "max_reps", "budget", "cut"

  /// Percentiles by linear interpolation between order statistics.
  static TimingStats from_samples(std::vector<double> samples_ms);
};

/// The q-quantile (0..1) of `sorted`, linear interpolation; 0 when empty.
double quantile(const std::vector<double>& sorted, double q);

}  // namespace kforge
